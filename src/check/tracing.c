// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ksyms.h"
#include "ret_pf.h"
#include "tracefs.h"

/* Events no source attaches that say what a host's KVM does; lock:* are in kernel.c's section. */
static const struct source_tracepoint context_events[] = {
	{"kvm", "kvm_entry", NULL},
	{"kvm", "kvm_exit", NULL},
};

void check_open_collector(struct check_state *st, const struct check_env *env, const int *pids,
			  size_t n)
{
	/* filter_pids with no pid added: everything loads and attaches, nothing is counted. */
	const struct collector_opts opts = {
		.mode = env->mode,
		.attribution = ATTRIBUTE_AUTO,
		.filter_pids = true,
		.pids = pids,
		.n_pids = n,
	};

	st->collector_err = collector_open(&st->c, &opts);
	st->collector_open = !st->collector_err;
	if (!st->collector_open)
		collector_close(&st->c);
}

static const struct probe_status *tracepoint_probe(const struct check_state *st, const char *group,
						   const char *event)
{
	for (size_t i = 0; st->collector_open && i < st->c.faults.n_probes; i++) {
		const struct probe_status *p = &st->c.faults.probes[i];

		if (p->group && !strcmp(p->group, group) && !strcmp(p->name, event))
			return p;
	}
	return NULL;
}

void report_tracepoint(struct check_state *st, const char *group, const char *event,
		       const char *part)
{
	const struct probe_status *p = tracepoint_probe(st, group, event);
	bool btf = kernel_btf_has_tp_btf(&st->kb, event);
	char label[96], use[256];

	snprintf(label, sizeof(label), "%s:%s", group, event);
	if (!st->collector_open)
		snprintf(use, sizeof(use), "collector not loaded");
	else if (!p && part)
		snprintf(use, sizeof(use),
			 "by the %s part (--metric %s, on by default), not loaded by kvmmmu-check",
			 part, part);
	else if (!p)
		snprintf(use, sizeof(use), "not used");
	else if (p->kind != ATTACH_NONE)
		snprintf(use, sizeof(use), "%s", attach_kind_str(p->kind));
	else if (!p->wanted)
		snprintf(use, sizeof(use), "%s", p->why);
	else
		snprintf(use, sizeof(use), "unavailable (%s)", p->why);
	report_item(label, yes_no(tracefs_has_event(group, event)),
		    "tp_btf possible: %s; kvmmmu: %s", yes_no(btf), use);
}

void check_tracepoints(struct check_state *st)
{
	const char *dir = tracefs_dir();

	report_heading("Tracepoints (present in tracefs; tp_btf possible; what kvmmmu attaches)");
	report_item("tracefs", dir ? "yes" : "no", "%s", dir ? dir : "not mounted and cannot be");
	struct source_tracepoint tps[64];
	size_t n = collector_tracepoints(tps, sizeof(tps) / sizeof(tps[0]));

	/* the sources' own tables: what kvmmmu attaches is what is listed */
	for (size_t i = 0; i < n && i < sizeof(tps) / sizeof(tps[0]); i++)
		report_tracepoint(st, tps[i].group, tps[i].event,
				  strcmp(tps[i].source, "faults") ? "mmu" : NULL);
	for (size_t i = 0; i < sizeof(context_events) / sizeof(context_events[0]); i++)
		report_tracepoint(st, context_events[i].group, context_events[i].event, NULL);
}

static const char *ksym_short(enum ksym_state s)
{
	switch (s) {
	case KSYM_PRESENT:
		return "present";
	case KSYM_ONLY_CLONE:
		return "only a compiler clone";
	default:
		return "absent";
	}
}

/* What can refuse function probes: no kprobe PMU, lockdown (when securityfs shows it). */
static void environment(void)
{
	char buf[128] = "", *open, *close;
	FILE *f;

	report_item("kprobe PMU", yes_no(!access("/sys/bus/event_source/devices/kprobe", F_OK)),
		    "/sys/bus/event_source/devices/kprobe");
	f = fopen("/sys/kernel/security/lockdown", "r");
	if (!f)
		return;
	/* "none [integrity] confidentiality" */
	if (fgets(buf, sizeof(buf), f) && (open = strchr(buf, '[')) &&
	    (close = strchr(open, ']'))) {
		*close = '\0';
		report_item("kernel lockdown", open + 1, "/sys/kernel/security/lockdown");
	}
	fclose(f);
}

void check_functions(struct check_state *st)
{
	enum ksym_state fpf = ksym_lookup(NULL, "fast_page_fault");
	char heading[96];

	snprintf(heading, sizeof(heading), "Function probes (%s%s)",
		 st->collector_open ? st->c.engine.mode_origin : "--probe-mode ",
		 probe_mode_names[st->mode]);
	report_heading(heading);
	environment();
	if (!st->collector_open)
		report_fail("BPF collector", "does not load: %s", strerror(-st->collector_err));
	for (size_t i = 0; st->collector_open && i < st->c.faults.n_probes; i++) {
		const struct probe_status *p = &st->c.faults.probes[i];
		enum ksym_state ks;

		if (p->group)
			continue;
		ks = ksym_lookup(NULL, p->name);
		if (p->kind != ATTACH_NONE)
			report_item(p->name, attach_kind_str(p->kind), "kallsyms: %s",
				    ksym_short(ks));
		else
			report_item(p->name, attach_kind_str(p->kind), "kallsyms: %s; %s",
				    ksym_short(ks), *p->why ? p->why : "not attached");
	}
	if (fpf == KSYM_PRESENT)
		report_item("fast_page_fault", "not used",
			    "kallsyms: present; kvmmmu uses the kvmmmu:fast_page_fault tracepoint "
			    "(or KVM's pf_fast) instead");
	else
		report_item("fast_page_fault", "unavailable",
			    "not attachable: kallsyms: %s; kvmmmu uses the kvmmmu:fast_page_fault "
			    "tracepoint (or KVM's pf_fast) instead",
			    ksym_state_str(fpf));
}

static void print_table(const struct ret_pf_table *t)
{
	/* the kernel's RET_PF_* values, not kvmmmu's "error" slot after them */
	for (int v = 0; v < KVMMMU_RET_PF_ERROR; v++) {
		char label[64], value[16];
		int n;

		if (!t->name[v])
			continue;
		n = snprintf(label, sizeof(label), "RET_PF_%s", t->name[v]);
		for (int k = 7; k < n && label[k]; k++)
			label[k] = (char)toupper((unsigned char)label[k]);
		snprintf(value, sizeof(value), "%d", v);
		report_item(label, value, NULL);
	}
}

/* What the kvmmmu:fast_page_fault format says, against BTF's values. */
static void check_format(struct check_state *st, const struct ret_pf_table *btf, bool have_btf)
{
	const char *fix_label = "fast_page_fault format: enum-export fix";
	const char *agree_label = "fast_page_fault format agrees with BTF";
	char *fmt = tracefs_read_format("kvmmmu", "fast_page_fault");
	struct ret_pf_table ft = {};
	int bs, bf, fs, ff;

	if (!fmt) {
		report_item(fix_label, "n/a", "no kvmmmu:fast_page_fault format in tracefs");
		return;
	}
	if (ret_pf_format_lacks_enum_fix(fmt)) {
		report_item(
			fix_label, "no",
			"print fmt names RET_PF_SPURIOUS/RET_PF_FIXED: perf and trace-cmd print 0 "
			"for them (kvmmmu reads the binary ret and is not affected)");
		free(fmt);
		return;
	}
	if (ret_pf_from_format(&ft, fmt)) {
		report_item(fix_label, "unknown", "print fmt not understood");
		free(fmt);
		return;
	}
	fs = ret_pf_value(&ft, "spurious");
	ff = ret_pf_value(&ft, "fixed");
	report_item(fix_label, "yes", "print fmt shows REC->ret == %d, REC->ret == %d", fs, ff);
	if (have_btf) {
		bs = ret_pf_value(btf, "spurious");
		bf = ret_pf_value(btf, "fixed");
		if (bs == fs && bf == ff) {
			report_item(agree_label, "yes", "SPURIOUS=%d FIXED=%d", fs, ff);
		} else {
			st->ret_pf_conflict = true;
			report_fail(agree_label,
				    "tracefs says SPURIOUS=%d FIXED=%d, BTF says "
				    "SPURIOUS=%d FIXED=%d",
				    fs, ff, bs, bf);
		}
	}
	if (!st->ret_pf) {
		st->ret_pf = true;
		report_item("decoded from", "tracefs", "SPURIOUS and FIXED only");
		print_table(&ft);
	}
	ret_pf_free(&ft);
	free(fmt);
}

void check_ret_pf(struct check_state *st)
{
	struct btf *b = kernel_btf_kvm_types(&st->kb);
	struct ret_pf_table bt = {};
	bool have_btf = b && !ret_pf_from_btf(&bt, b);

	report_heading("RET_PF_* outcome values");
	if (have_btf) {
		st->ret_pf = true;
		report_item("decoded from", "BTF", "%s", st->kb.kvm ? "kvm module" : "vmlinux");
		print_table(&bt);
	} else {
		report_item("RET_PF_ enumerators in BTF", "no", NULL);
	}
	check_format(st, &bt, have_btf);
	if (!st->ret_pf)
		report_fail("RET_PF_* values", "neither BTF nor the tracefs format gives them");
	ret_pf_free(&bt);
}

/*
 * The changes kernel-patches/ carries, as the running kernel shows them:
 * from tracefs and kallsyms, never from the version string.
 */
void check_carried(struct check_state *st)
{
	char *fmt = tracefs_read_format("kvmmmu", "fast_page_fault");
	enum ksym_state recover = ksym_lookup(NULL, "kvm_tdp_mmu_recover_huge_pages");
	enum ksym_state zap = ksym_lookup(NULL, "kvm_tdp_mmu_zap_collapsible_sptes");
	enum ksym_state update_root = ksym_lookup(NULL, "kvm_mmu_update_root");
	enum ksym_state reset = ksym_lookup(NULL, "kvm_mmu_reset_context");

	(void)st;
	report_heading("Changes kernel-patches/ carries (from tracefs and kallsyms)");
	if (!fmt)
		report_item("RET_PF_* enum export", "n/a", "no kvmmmu:fast_page_fault format");
	else
		report_item("RET_PF_* enum export",
			    ret_pf_format_lacks_enum_fix(fmt) ? "no" : "yes", "%s",
			    ret_pf_format_lacks_enum_fix(fmt)
				    ? "trace-cmd and perf print 'spurious 0 fixed 0'; kvmmmu is "
				      "not affected"
				    : "TRACE_DEFINE_ENUM: tracefs prints RET_PF_* as numbers");
	free(fmt);
	if (tracefs_has_event("kvmmmu", "kvm_mmu_page_fault_done") &&
	    !tracefs_event_has_field("kvmmmu", "kvm_mmu_page_fault_done", "goal_level"))
		report_item("kvm_mmu_page_fault_done event", "old",
			    "an older kernel-patches/ 0001 (no goal_level), which kvmmmu does not "
			    "use: build the modules from this kernel-patches/");
	else if (tracefs_has_event("kvmmmu", "kvm_mmu_page_fault_done"))
		report_item("kvm_mmu_page_fault_done event", "yes",
			    "every counted fault's outcome and duration in one event: kvmmmu's "
			    "tracepoint mode counts outcomes from it and times whole faults");
	else
		report_item("kvm_mmu_page_fault_done event", "no",
			    "tracepoint mode infers outcomes from the other events and has no "
			    "whole-fault latency; kernel-patches/ adds the event");
	if (recover == KSYM_PRESENT)
		report_item("huge pages recovered in place", "yes",
			    "kvm_tdp_mmu_recover_huge_pages: turning dirty logging off keeps "
			    "the mappings: the faults after it only restore write access, "
			    "locklessly (pf_fast), instead of refaulting");
	else if (zap != KSYM_ABSENT)
		report_item(
			"huge pages recovered in place", "no",
			"kvm_tdp_mmu_zap_collapsible_sptes: turning dirty logging off zaps, "
			"and faults follow (kvmmmu: event_dirty_log_off_ns, the faults after it)");
	else
		report_item("huge pages recovered in place", "unknown",
			    "neither kvm_tdp_mmu_recover_huge_pages nor "
			    "kvm_tdp_mmu_zap_collapsible_sptes in kallsyms (KVM not loaded?)");
	/* kvm_mmu_update_root() switches roots on a role change, where it exists */
	if (update_root == KSYM_PRESENT)
		report_item(
			"MMU roots kept on role changes", "yes",
			"kvm_mmu_update_root: a role change (CR0.WP under shadow paging, "
			"CR4 paging bits, SMM) switches to a cached root; kvmmmu: root_unloads");
	else if (reset != KSYM_ABSENT)
		report_item("MMU roots kept on role changes", "no",
			    "a role change unloads the vCPU's roots (upstream 01b31714bd90 spares "
			    "CR0.WP with TDP); kvmmmu: root_unloads, root_loads (function probes)");
	else
		report_item("MMU roots kept on role changes", "unknown",
			    "no kvm_mmu_reset_context in kallsyms (KVM not loaded?)");
}
