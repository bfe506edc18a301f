// SPDX-License-Identifier: GPL-2.0
/*
 * bpfscenarios: kvmmmu's BPF programs driven through event sequences with
 * BPF_PROG_TEST_RUN on their raw_tp twins, in this thread, on one CPU (per-CPU
 * state stays put): deterministic cases of what a live kernel shows only by
 * chance. Prints one PASS/FAIL line per case; exits 1 if any fails, 2 if the
 * programs cannot run (used by test_mmu.sh).
 *
 * A file per group of cases (each file's header says what its cases show):
 *   bpfscenarios.c        main(), running a program, the verdicts, the faults object
 *   bpfscenarios_lock.c   the mmu_lock object: lock/, lock-in-fault/
 *   bpfscenarios_model.c  the faults object's tracepoint model: exit-walk/, sample/, ept/
 *   bpfscenarios_kmem.c   faults read from kernel memory: prefetch/, tdp/, emulate/, error/,
 *                         done/
 *
 * Usage: bpfscenarios
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kvmmmu.h"
#include "faults.skel.h"
#include "bpfscenarios.h"

static int failures;

/* PROG run once on raw_tp arguments ARGS (N of them). */
int run_args(struct bpf_program *prog, __u64 *args, size_t n)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = n * sizeof(*args));
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);

	if (err)
		fprintf(stderr, "bpfscenarios: BPF_PROG_TEST_RUN %s: %s\n", bpf_program__name(prog),
			strerror(errno));
	return err;
}

int run3(struct bpf_program *prog, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 args[3] = {a0, a1, a2};

	return run_args(prog, args, 3);
}

/*
 * kvmmmu:kvm_mmu_page_fault_done (kernel-patches/): vcpu, cr2_or_gpa, error_code, ret,
 * start_ns, goal_level, fast
 */
int run_done_at(struct bpf_program *prog, __u64 ret, __u64 start_ns, __u64 goal_level, __u64 fast)
{
	__u64 args[7] = {0, 0x1000, 0, ret, start_ns, goal_level, fast};

	return run_args(prog, args, 7);
}

/* ... a 4 KiB fault off the fast path */
int run_done(struct bpf_program *prog, __u64 ret, __u64 start_ns)
{
	return run_done_at(prog, ret, start_ns, 1, 0);
}

void expect(const char *name, bool ok, const char *what)
{
	printf("%s %s: %s\n", ok ? "PASS" : "FAIL", name, what);
	failures += !ok;
}

/* expect() with WHAT formatted. */
__attribute__((format(printf, 3, 4))) void expectf(const char *name, bool ok, const char *fmt, ...)
{
	char what[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	expect(name, ok, what);
}

/* Writes this thread's faults entry with the fault state ST, as the faults object would. */
int put_fault_state(int thread_stats_fd, const struct kvmmmu_fault_state *st)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};
	static struct kvmmmu_thread_stats s;

	memset(&s, 0, sizeof(s));
	s.id.ready = 1;
	s.id.vcpu_id = 0;
	s.st = *st;
	if (bpf_map_update_elem(thread_stats_fd, &key, &s, BPF_ANY)) {
		fprintf(stderr, "bpfscenarios: cannot write the faults entry: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* The faults object in tracepoint mode, timing 1 fault in SAMPLE_EVERY; VMX_EPT: as on Intel with
 * EPT. */
int setup_faults_on(struct faults_bpf **out, __u32 sample_every, bool vmx_ept)
{
	struct faults_bpf *skel = faults_bpf__open();
	struct bpf_program *p;

	if (!skel) {
		fprintf(stderr, "bpfscenarios: cannot open the faults object: %s\n",
			strerror(errno));
		return -1;
	}
	bpf_object__for_each_program (p, skel->obj)
		bpf_program__set_autoload(p,
					  p == skel->progs.kvm_page_fault_raw ||
						  p == skel->progs.kvm_mmu_pagetable_walk_raw ||
						  p == skel->progs.kvm_userspace_exit_raw ||
						  p == skel->progs.kvm_emulate_insn_raw ||
						  p == skel->progs.kvm_mmu_spte_requested_raw ||
						  p == skel->progs.kvm_mmu_set_spte_raw ||
						  p == skel->progs.kvm_tdp_mmu_spte_changed_raw ||
						  p == skel->progs.kvm_mmu_page_fault_done_raw);
	skel->rodata->sample_every = sample_every;
	skel->rodata->pf_exit_rsvd_is_mmio = !vmx_ept;
	skel->rodata->ret_pf_retry = RET_PF_RETRY;
	skel->rodata->ret_pf_emulate = RET_PF_EMULATE;
	skel->rodata->ret_pf_write_protected = RET_PF_EMULATE;
	skel->rodata->ret_pf_fixed = RET_PF_FIXED;
	skel->rodata->ret_pf_spurious = RET_PF_SPURIOUS;
	skel->rodata->pf_exit_error_code_arg = PF_EXIT_ERROR_CODE_ARG;
	skel->rodata->tdp_mmu_param =
		0; /* the thread's VM: no TDP MMU, so not a shadow fault: direct */
	if (faults_bpf__load(skel)) {
		fprintf(stderr, "bpfscenarios: cannot load the faults object: %s\n",
			strerror(errno));
		faults_bpf__destroy(skel);
		return -1;
	}
	skel->bss->armed = true;
	*out = skel;
	return 0;
}

int setup_faults(struct faults_bpf **out, __u32 sample_every)
{
	return setup_faults_on(out, sample_every, false);
}

/* This thread's figures in the faults object (zeros when it has no entry). */
void thread_figures(struct faults_bpf *skel, struct kvmmmu_thread_stats *s)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};

	if (bpf_map__lookup_elem(skel->maps.thread_stats, &key, sizeof(key), s, sizeof(*s), 0))
		memset(s, 0, sizeof(*s));
}

int main(void)
{
	cpu_set_t one;

	/* every run on one CPU, as a spinning waiter's begin and end are */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		fprintf(stderr, "bpfscenarios: sched_setaffinity: %s\n", strerror(errno));
		return 2;
	}
	if (lock_scenarios() || in_fault_scenarios() || exit_walk_scenarios() ||
	    reload_lock_scenarios() || sample_scenarios() || ept_scenarios() || fault_scenarios())
		return 2;
	return failures ? 1 : 0;
}
