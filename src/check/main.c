// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-check: prints what this host offers for tracing the KVM x86 MMU
 * (kernel, BTF, KVM, /dev/kvm, binary statistics, tracepoints, function
 * probes, RET_PF_* values, mmu_lock) and what kvmmmu will use, then a
 * verdict. Exits 0 when kvmmmu can trace this host, 1 when it cannot.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli.h"
#include "log.h"
#include "sysinfo.h"

const char *log_prog = "kvmmmu-check";
bool log_verbose;

static bool attached(const struct collector *c, const char *name)
{
	const struct probe_status *p = faults_source_probe(&c->faults, name);

	return p && p->kind != ATTACH_NONE;
}

/* Why kvmmmu cannot trace this host, or NULL when it can. */
static const char *core_failure(const struct check_state *st, char *buf, size_t len)
{
	if (!st->btf)
		return "no vmlinux BTF (kvmmmu needs CONFIG_DEBUG_INFO_BTF)";
	if (!st->ret_pf)
		return "RET_PF_* values cannot be decoded (neither BTF nor the tracefs format)";
	if (st->ret_pf_conflict)
		return "RET_PF_* values in BTF and in the fast_page_fault format disagree";
	if (!st->collector_open) {
		snprintf(buf, len, "the BPF collector does not load: %s",
			 strerror(-st->collector_err));
		return buf;
	}
	if (!st->c.faults.func_mode &&
	    !(attached(&st->c, "kvm_mmu_spte_requested") && attached(&st->c, "kvm_mmu_set_spte")))
		return "neither the kvm_mmu_spte_requested/kvm_mmu_set_spte tracepoints nor "
		       "function probes on the fault handlers attach";
	return NULL;
}

/* "tracepoint-only mode (no fentry/kprobe)", "full mode (fsession+fentry)", ... */
static void describe_mode(const struct collector *c, char *buf, size_t len)
{
	size_t n_func = 0, n_on = 0;
	bool fsession = false, fentry = false, kprobe = false;

	for (size_t i = 0; i < c->faults.n_probes; i++) {
		const struct probe_status *p = &c->faults.probes[i];

		if (p->group)
			continue;
		n_func++;
		if (p->kind == ATTACH_NONE)
			continue;
		n_on++;
		fsession |= p->kind == ATTACH_FSESSION;
		fentry |= p->kind == ATTACH_FENTRY;
		kprobe |= p->kind == ATTACH_KPROBE;
	}
	if (!n_on)
		snprintf(buf, len, "tracepoint-only mode (no fentry/kprobe)");
	else
		snprintf(buf, len, "%s mode (%s%s%s%s%s%s)", n_on == n_func ? "full" : "partial",
			 fsession ? "fsession" : "", fsession && (fentry || kprobe) ? "+" : "",
			 fentry ? "fentry" : "", fentry && kprobe ? "+" : "",
			 kprobe ? "kprobe" : "",
			 n_on == n_func ? "" : ", some function probes unavailable");
}

static void verdict(const struct check_state *st, const char *failure)
{
	char mode[128], missing[128] = "";
	size_t used = 0;

	report_heading("Verdict");
	if (failure) {
		printf("kvmmmu cannot trace this host: %s\n", failure);
		return;
	}
	describe_mode(&st->c, mode, sizeof(mode));
	for (int h = 0; h < KVMMMU_N_HISTS; h++) {
		const char *why;
		int n;

		if (!kvmmmu_hist_words[h] || collector_hist_available(&st->c, h, &why))
			continue;
		n = snprintf(missing + used, sizeof(missing) - used, "%s%s", used ? "/" : "",
			     kvmmmu_hist_words[h]);
		if (n > 0 && (size_t)n < sizeof(missing) - used)
			used += (size_t)n;
	}
	printf("kvmmmu can trace this host: %s: outcomes exact (%s), %s%s\n", mode,
	       st->c.faults.func_mode ? "from the fault handlers' return values"
				      : "from kvm_mmu_spte_requested/kvm_mmu_set_spte",
	       *missing ? missing : "all latency histograms available",
	       *missing ? " latency unavailable" : "");
}

int main(int argc, char **argv)
{
	static struct check_state st;
	struct check_env env = {};
	const char *failure;
	char buf[256];

	setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
	check_parse_args(argc, argv, &env);
	log_verbose = env.verbose;
	/* probing is its job: what fails is in its report; libbpf's words with -v */
	libbpf_set_print(log_libbpf);
	if (geteuid() != 0) {
		elog("must run as root: it loads BPF programs, reads tracefs and opens /dev/kvm");
		return 1;
	}

	if (env.validate) {
		int rc = check_validate(&env);

		return cli_flush_stdout() ? 1 : rc;
	}
	printf("kvmmmu-check %s: what this host offers for tracing the KVM MMU, and what kvmmmu "
	       "uses\n",
	       KVMMMU_VERSION);
	check_kernel(&st);
	check_dev_kvm();
	if (st.btf)
		check_open_collector(&st, &env, NULL, 0);
	else
		st.collector_err = -ENOENT;
	st.mode = st.collector_open ? st.c.opts.mode : env.mode;
	check_tracepoints(&st);
	check_functions(&st);
	check_ret_pf(&st);
	check_carried(&st);
	check_mmu_lock(&st);

	failure = core_failure(&st, buf, sizeof(buf));
	verdict(&st, failure);
	if (st.collector_open)
		collector_close(&st.c);
	kernel_btf_free(&st.kb);
	/* a report lost on its way (a full disk) is no verdict */
	return cli_flush_stdout() || failure ? 1 : 0;
}
