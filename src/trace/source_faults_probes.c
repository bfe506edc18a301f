// SPDX-License-Identifier: GPL-2.0
/*
 * The faults object's probe points (source_faults.h's last part): the
 * tracepoints and functions it may attach, which of them a session's
 * options want and how the programs are to run, and what each figure
 * needs of them once attached.
 */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source_faults.h" /* first: the skeleton needs kvmmmu.h's types */
#include "faults.skel.h"
#include "kernel_btf.h"
#include "ksyms.h"
#include "sysinfo.h"
#include "tracefs.h"

#define FAULTS_PROG(name) SKEL_PROG(faults_bpf, name)
/* a tracepoint's tp_btf and raw_tp twins (TP_PAIR) */
#define TP_PROGS(event)                                                                            \
	{                                                                                          \
		[SLOT_TP_BTF] = FAULTS_PROG(event##_btf), [SLOT_RAW_TP] = FAULTS_PROG(event##_raw) \
	}
/* a function's entry and exit programs, fentry/fexit and kprobe/kretprobe */
#define FUNC_PROGS(func)                                                                           \
	{                                                                                          \
		[SLOT_FENTRY] = FAULTS_PROG(func##_fentry),                                        \
		[SLOT_FEXIT] = FAULTS_PROG(func##_fexit),                                          \
		[SLOT_KPROBE] = FAULTS_PROG(func##_kprobe),                                        \
		[SLOT_KRETPROBE] = FAULTS_PROG(func##_kretprobe),                                  \
	}
/* ... entry programs only */
#define ENTRY_PROGS(func)                                                                          \
	{                                                                                          \
		[SLOT_FENTRY] = FAULTS_PROG(func##_fentry), [SLOT_KPROBE] =                        \
								    FAULTS_PROG(func##_kprobe)     \
	}

/* Tracepoints, in the order the header line lists them. */
const struct faults_tp_point faults_tracepoints[] = {
	{"kvmmmu", "kvm_mmu_pagetable_walk", false, false, false, false,
	 TP_PROGS(kvm_mmu_pagetable_walk), true, MODEL_NEEDED_DONE_WALK, KVMMMU_GUEST_WALKS, -1},
	{"kvmmmu", "kvm_mmu_walker_error", false, false, false, false,
	 TP_PROGS(kvm_mmu_walker_error), true, MODEL_NEEDED_DONE_WALK, KVMMMU_WALKER_ERRORS, -1},
	/*
	 * the levels requested and why not huge, a slow fault's gfn and access;
	 * the done event carries the rest
	 */
	{"kvmmmu", "kvm_mmu_spte_requested", false, false, false, false,
	 TP_PROGS(kvm_mmu_spte_requested), true,
	 MODEL_NEEDED_FUNCS | MODEL_NEEDED_LEVELS | MODEL_NEEDED_PHASES | MODEL_NEEDED_DONE_SLOWER,
	 KVMMMU_SPTE_REQUESTED, -1},
	/*
	 * the level a fault's SPTE was set at, else read at its handler's return
	 * (functions) or carried by the done event
	 */
	{"kvmmmu", "kvm_mmu_set_spte", false, false, false, false, TP_PROGS(kvm_mmu_set_spte), true,
	 MODEL_NEEDED_PHASES | MODEL_NEEDED_DONE_SLOWER, KVMMMU_SPTES_SET, KVMMMU_SPTES_PREFETCHED},
	/* the fast path's fixes, else told by the handler's return (pf_fast) or the done event */
	{"kvmmmu", "fast_page_fault", false, false, false, false, TP_PROGS(fast_page_fault), true,
	 MODEL_NEEDED_NO_PF_FAST, KVMMMU_FAST_PF_CALLS, -1},
	{"kvmmmu", "kvm_tdp_mmu_spte_changed", false, false, false, false,
	 TP_PROGS(kvm_tdp_mmu_spte_changed), true, 0, KVMMMU_TDP_SPTE_CHANGES, -1},
	{"kvmmmu", "handle_mmio_page_fault", false, false, false, false,
	 TP_PROGS(handle_mmio_page_fault), true, 0, KVMMMU_MMIO_FAULTS, -1},
	{"kvmmmu", "mark_mmio_spte", false, false, false, false, TP_PROGS(mark_mmio_spte), false, 0,
	 -1, -1},
	{"kvmmmu", "kvm_mmu_paging_element", true, false, false, false,
	 TP_PROGS(kvm_mmu_paging_element), false, 0, -1, -1},
	/* every counted fault's outcome and duration, where kernel-patches/ adds it */
	{"kvmmmu", "kvm_mmu_page_fault_done", false, true, false, false,
	 TP_PROGS(kvm_mmu_page_fault_done), false, 0, -1, -1},
	{"kvm", "kvm_page_fault", false, false, false, false, TP_PROGS(kvm_page_fault), true, 0,
	 KVMMMU_PF_EXITS, -1},
	/* end the faults of page-fault exits that requested no SPTE (tracepoint model) */
	{"kvm", "kvm_emulate_insn", false, false, false, false, TP_PROGS(kvm_emulate_insn), true, 0,
	 -1, -1},
	{"kvm", "kvm_userspace_exit", false, false, false, false, TP_PROGS(kvm_userspace_exit),
	 true, MODEL_NEEDED_DONE_WALK, -1, -1},
	/* frees exited threads' entries */
	{"sched", "sched_process_exit", false, false, false, false, TP_PROGS(sched_process_exit),
	 false, 0, -1, -1},
	/* a command's children join the filter: sudo, timeout, a wrapper script */
	{"sched", "sched_process_fork", false, false, true, false, TP_PROGS(sched_process_fork),
	 false, 0, -1, -1},
	/* --stack: a slow fault's waits off the CPU, and their stacks */
	{"sched", "sched_switch", false, false, false, true, TP_PROGS(sched_switch), false, 0, -1,
	 -1},
};

/* Function probes (struct faults_func_point). */
const struct faults_func_point faults_functions[] = {
	{"kvm_mmu_page_fault", true, false, -1, FUNC_PROGS(kvm_mmu_page_fault), false, false,
	 false},
	{"kvm_tdp_page_fault", true, false, 2, FUNC_PROGS(kvm_tdp_page_fault), false, false, false},
	{"paging64_page_fault", true, false, 2, FUNC_PROGS(paging64_page_fault), false, false,
	 false},
	/* the other handlers mmu->page_fault may point at: every fault is counted once */
	{"paging32_page_fault", true, true, 2, FUNC_PROGS(paging32_page_fault), false, false,
	 false},
	{"ept_page_fault", true, true, 2, FUNC_PROGS(ept_page_fault), false, false, false},
	{"nonpaging_page_fault", true, true, 2, FUNC_PROGS(nonpaging_page_fault), false, false,
	 false},
	{"direct_page_fault", false, false, -1, ENTRY_PROGS(direct_page_fault), false, false,
	 false},
	{"kvm_vcpu_gfn_to_memslot", false, false, -1, FUNC_PROGS(kvm_vcpu_gfn_to_memslot), false,
	 false, true},
	/* the phases: the guest walk (shadow paging), then the host page */
	{"paging64_walk_addr_generic", false, true, -1, FUNC_PROGS(paging64_walk_addr_generic),
	 true, false, false},
	{"paging32_walk_addr_generic", false, true, -1, FUNC_PROGS(paging32_walk_addr_generic),
	 true, false, false},
	{"ept_walk_addr_generic", false, true, -1, FUNC_PROGS(ept_walk_addr_generic), true, false,
	 false},
	{"kvm_mmu_faultin_pfn", false, true, -1, FUNC_PROGS(kvm_mmu_faultin_pfn), true, false,
	 false},
	{"kvm_faultin_pfn", false, true, -1, FUNC_PROGS(kvm_faultin_pfn), true, true, false},
};

_Static_assert(sizeof(faults_tracepoints) / sizeof(faults_tracepoints[0]) == FAULTS_N_TP,
	       "FAULTS_N_TP counts the tracepoints");
_Static_assert(sizeof(faults_functions) / sizeof(faults_functions[0]) == FAULTS_N_FUNC,
	       "FAULTS_N_FUNC counts the functions");

struct probe_progs faults_probe_progs(const struct faults_source *fs, size_t i)
{
	struct probe_progs pp;

	probe_progs_of(&pp, fs->skel,
		       i < FAULTS_N_FUNC ? faults_functions[i].progs
					 : faults_tracepoints[i - FAULTS_N_FUNC].progs);
	pp.prog[SLOT_FSESSION] = faults_session_prog(fs, i);
	return pp;
}

/*
 * kvm:kvm_page_fault's error code, as an index into its raw arguments:
 * (vcpu, address, error_code) since 6.1, (address, error_code) before. From
 * BTF, else from the event's format (the vCPU came with a vcpu_id field).
 */
static int pf_exit_error_code_arg(struct kernel_btf *kb)
{
	int n = kernel_btf_tp_args(kb, "kvm_page_fault");
	char *fmt;

	if (n == 3 || n == 2)
		return n - 1;
	if (n >= 0)
		return -1;
	fmt = tracefs_read_format("kvm", "kvm_page_fault");
	n = !fmt ? -1 : strstr(fmt, "vcpu_id;") ? 2 : 1;
	free(fmt);
	return n;
}

/*
 * The memslot lookup only for the memslot figures; a phase's function with
 * --metric phases, where the kernel has it, and for another name of the
 * function before it only when that one is not probed.
 */
bool faults_function_wanted(const struct faults_source *fs, size_t i,
			    const enum attach_kind func_kind[FAULTS_N_FUNC], char *why, size_t size)
{
	if (faults_functions[i].memslot && fs->opts->memslot_off) {
		if (size)
			snprintf(why, size, "%s", fs->memslot_off_why);
		return false;
	}
	if (!faults_functions[i].phase)
		return true;
	if (!fs->opts->phases) {
		if (size)
			snprintf(why, size, "%s", fs->phases_off_why);
		return false;
	}
	if (faults_functions[i].alternative && i > 0 && func_kind[i - 1] != ATTACH_NONE) {
		if (size)
			snprintf(why, size, "not needed: %s is probed",
				 faults_functions[i - 1].func);
		return false;
	}
	if (ksym_lookup(NULL, faults_functions[i].func) != KSYM_PRESENT) {
		if (size)
			snprintf(why, size, "not in this kernel");
		return false;
	}
	return true;
}

/*
 * A page-fault handler's entry program is needed only where a figure asks
 * whether the handler has started: the memslot lookups before it, the
 * phases inside it (handler_entries in faults_functions.bpf.h). Its exit
 * gives the outcome either way.
 */
static bool handler_entries_needed(const struct faults_source *fs)
{
	return !fs->opts->memslot_off || fs->opts->phases;
}

/* Function I is a page-fault handler: its return value is the fault's RET_PF_*. */
static bool is_handler(size_t i)
{
	return faults_functions[i].defines_outcome && faults_functions[i].ret_arg >= 0;
}

bool faults_function_both_ends(const struct faults_source *fs, size_t i)
{
	return faults_functions[i].progs[SLOT_FEXIT] &&
	       (!is_handler(i) || handler_entries_needed(fs));
}

const struct probe_status *faults_source_probe(const struct faults_source *fs, const char *name)
{
	for (size_t i = 0; i < fs->n_probes; i++)
		if (!strcmp(fs->probes[i].name, name))
			return &fs->probes[i];
	return NULL;
}

static bool attached(const struct faults_source *fs, const char *name)
{
	const struct probe_status *p = faults_source_probe(fs, name);

	return p && p->kind != ATTACH_NONE;
}

/*
 * Tracepoint I is the tracepoint model's, and what it gives is had from the
 * handlers' returns (OUTCOME_FUNCS) or the done event (DONE), and no event
 * count or phase asked for needs it.
 */
static bool model_event_unneeded(const struct faults_source *fs, size_t i, bool outcome_funcs,
				 bool done)
{
	const struct faults_tp_point *t = &faults_tracepoints[i];

	if (!t->model || (!outcome_funcs && !done))
		return false;
	if (outcome_funcs && (t->needed_by & MODEL_NEEDED_FUNCS))
		return false;
	if (done && (t->needed_by & MODEL_NEEDED_DONE_WALK) &&
	    (fs->opts->lock || fs->opts->phases || fs->opts->slower_ns))
		return false;
	if (!fs->opts->levels_off && (t->needed_by & MODEL_NEEDED_LEVELS))
		return false;
	if (fs->opts->region_shift && (t->needed_by & MODEL_NEEDED_LEVELS))
		return false; /* the slow path's regions, from the request's gfn */
	if (fs->opts->phases && (t->needed_by & MODEL_NEEDED_PHASES))
		return false;
	if (done && fs->opts->slower_ns && (t->needed_by & MODEL_NEEDED_DONE_SLOWER))
		return false;
	if (outcome_funcs && !fs->has_pf_fast && (t->needed_by & MODEL_NEEDED_NO_PF_FAST))
		return false;
	return t->counter < 0 || fs->opts->event_counts_off;
}

/*
 * The done event as kernel-patches/ 0001 has it now, with the fault's goal
 * level and fast path; the first version's (no goal_level) would need the
 * tracepoints the done event now replaces, and its programs would not load.
 */
static bool done_event_usable(const struct faults_tp_point *t)
{
	return tracefs_has_event(t->group, t->event) &&
	       tracefs_event_has_field(t->group, t->event, "goal_level");
}

void faults_plan(struct faults_source *fs, const enum attach_kind func_kind[FAULTS_N_FUNC],
		 const bool raw_only[FAULTS_N_TP])
{
	bool outcome_funcs = true, done = false;
	struct faults_bpf__rodata *ro = fs->skel->rodata;

	fs->n_probes = 0;
	for (size_t i = 0; i < FAULTS_N_FUNC; i++) {
		struct probe_status *p = &fs->probes[fs->n_probes++];
		enum attach_kind k = func_kind[i];
		struct probe_progs pp;

		p->name = faults_functions[i].func;
		/* a phase's function this kernel lacks, or does not need, is no loss */
		p->wanted = faults_function_wanted(fs, i, func_kind, NULL, 0);
		p->kind = k;
		pp = faults_probe_progs(fs, i);
		probe_progs_plan(&pp, k);
		if (is_handler(i) && !handler_entries_needed(fs)) {
			bpf_program__set_autoload(pp.prog[SLOT_FENTRY], false);
			bpf_program__set_autoload(pp.prog[SLOT_KPROBE], false);
		}
		if (faults_functions[i].defines_outcome && k == ATTACH_NONE &&
		    !(faults_functions[i].may_be_absent &&
		      ksym_lookup(NULL, p->name) != KSYM_PRESENT))
			outcome_funcs = false;
	}
	/* the done event ends faults where the kernel has it and no function probe does */
	for (size_t i = 0; i < FAULTS_N_TP && !outcome_funcs; i++)
		if (faults_tracepoints[i].patched && done_event_usable(&faults_tracepoints[i]))
			done = true;
	for (size_t i = 0; i < FAULTS_N_TP; i++) {
		struct probe_status *p = &fs->probes[fs->n_probes++];
		bool btf = attach_tp_btf_usable(fs->engine, faults_tracepoints[i].event) &&
			   !raw_only[i];
		struct probe_progs pp = faults_probe_progs(fs, FAULTS_N_FUNC + i);

		p->name = faults_tracepoints[i].event;
		p->group = faults_tracepoints[i].group;
		p->optional = faults_tracepoints[i].optional;
		/* the optional one, kvm_mmu_paging_element, ends the walk phase without functions
		 */
		p->wanted = faults_tracepoints[i].forks ? fs->opts->follow_forks
			    : faults_tracepoints[i].stacks
				    ? fs->opts->slow_stacks
				    : !p->optional || (fs->opts->phases && !outcome_funcs);
		if (faults_tracepoints[i].forks && !p->wanted) {
			snprintf(p->why, sizeof(p->why), "not needed: no command to follow");
		} else if (faults_tracepoints[i].stacks && !p->wanted) {
			snprintf(p->why, sizeof(p->why), "not needed: no --stack");
		} else if (model_event_unneeded(fs, i, outcome_funcs, done)) {
			p->wanted = false;
			snprintf(p->why, sizeof(p->why), "not needed: %s gives outcomes%s",
				 outcome_funcs ? "each handler's return"
					       : "kvm_mmu_page_fault_done",
				 faults_tracepoints[i].counter < 0
					 ? ""
					 : " (kvmmmu-hist --metric events counts it)");
		} else if (faults_tracepoints[i].patched && outcome_funcs) {
			p->wanted = false; /* the function probes give outcome and duration */
			snprintf(p->why, sizeof(p->why),
				 "not needed: function probes give outcomes");
		} else if (faults_tracepoints[i].patched &&
			   !tracefs_has_event(faults_tracepoints[i].group,
					      faults_tracepoints[i].event)) {
			p->wanted = false;
			snprintf(p->why, sizeof(p->why),
				 "not in this kernel (kernel-patches/ adds it)");
		} else if (faults_tracepoints[i].patched && !done) { /* its format, read above */
			p->wanted = false;
			snprintf(p->why, sizeof(p->why),
				 "an older kernel-patches/ 0001 without goal_level: not used");
		} else if (!p->wanted && fs->opts->phases) {
			snprintf(p->why, sizeof(p->why),
				 "not needed: function probes time the walk");
		} else if (!p->wanted) {
			snprintf(p->why, sizeof(p->why), "%s (costs an event per guest PTE)",
				 fs->phases_off_why);
		}
		p->kind = !p->wanted ? ATTACH_NONE : btf ? ATTACH_TP_BTF : ATTACH_RAW_TP;
		if (faults_tracepoints[i].patched && p->wanted)
			fs->done_event = true;
		probe_progs_plan(&pp, p->kind);
	}
	fs->func_mode = outcome_funcs;
	ro->func_mode = outcome_funcs;
	for (size_t i = 0; i < FAULTS_N_FUNC; i++)
		if (!strcmp(faults_functions[i].func, "direct_page_fault"))
			ro->direct_probed = func_kind[i] != ATTACH_NONE;
	ro->handler_entries = handler_entries_needed(fs);
	ro->fast_at_return = outcome_funcs && fs->has_pf_fast;
	ro->pf_exit_rsvd_is_mmio = !sysinfo_vmx_ept();
	ro->done_event = fs->done_event;
	ro->filter_pids = fs->opts->filter_pids;
	ro->follow_forks = fs->opts->follow_forks;
	ro->ret_pf_fixed = ret_pf_value(&fs->ret_pf, "fixed");
	ro->ret_pf_spurious = ret_pf_value(&fs->ret_pf, "spurious");
	ro->ret_pf_emulate = ret_pf_value(&fs->ret_pf, "emulate");
	ro->ret_pf_retry = ret_pf_value(&fs->ret_pf, "retry");
	ro->ret_pf_write_protected = ret_pf_value(&fs->ret_pf, "write_protected") >= 0
					     ? ret_pf_value(&fs->ret_pf, "write_protected")
					     : ro->ret_pf_emulate;
	ro->tdp_mmu_param = sysinfo_tdp_mmu_param();
	ro->have_rdonly_cast = kernel_btf_has_kfunc(&fs->engine->kb, "bpf_rdonly_cast");
	ro->pf_exit_error_code_arg = pf_exit_error_code_arg(&fs->engine->kb);
	ro->sample_every = fs->opts->sample_every > 1 ? fs->opts->sample_every : 1;
	ro->phases = fs->opts->phases;
	ro->slower_ns = fs->opts->slower_ns;
	ro->slow_stacks = fs->opts->slower_ns && fs->opts->slow_stacks;
	ro->region_shift = fs->opts->region_shift;
}

/* --metric phases asked for the phases' probes. */
static bool phases_on(const struct faults_source *fs, const char **why)
{
	*why = fs->phases_off_why;
	return fs->opts->phases;
}

bool faults_source_counted(const struct faults_source *fs, int counter)
{
	/* the levels requested and why not huge: the SPTE request's, which may be left out */
	switch (counter) {
	case KVMMMU_LEVEL_REQUESTED_4K:
	case KVMMMU_LEVEL_REQUESTED_2M:
	case KVMMMU_LEVEL_REQUESTED_1G:
	case KVMMMU_LEVEL_NOT_HUGE_DIRTY_LOG:
	case KVMMMU_LEVEL_NOT_HUGE_HOST:
	case KVMMMU_LEVEL_NOT_HUGE_NX:
	case KVMMMU_LEVEL_NOT_HUGE_GMEM: /* a kernel without fault->is_private has no guest_memfd */
		return attached(fs, "kvm_mmu_spte_requested");
	}
	for (size_t i = 0; i < FAULTS_N_TP; i++)
		if (faults_tracepoints[i].model &&
		    (faults_tracepoints[i].counter == counter ||
		     faults_tracepoints[i].second_counter == counter))
			return attached(fs, faults_tracepoints[i].event);
	return true;
}

bool faults_source_hist_available(const struct faults_source *fs, int hist, const char **why)
{
	switch (hist) {
	case KVMMMU_HIST_FAULT:
		*why = "needs kvm_mmu_page_fault (fentry or kprobe), or the "
		       "kvm_mmu_page_fault_done "
		       "tracepoint of kernel-patches/";
		return attached(fs, "kvm_mmu_page_fault") ||
		       attached(fs, "kvm_mmu_page_fault_done");
	/* both from the fault's start (kvm_mmu_page_fault), in function mode only */
	case KVMMMU_HIST_FAST:
		*why = "needs kvm_mmu_page_fault and the page-fault handlers (fentry or kprobe), "
		       "and KVM's pf_fast statistic or the fast_page_fault tracepoint";
		return fs->func_mode && (fs->has_pf_fast || attached(fs, "fast_page_fault"));
	case KVMMMU_HIST_SLOW:
		*why = "needs kvm_mmu_page_fault and the page-fault handlers (fentry or kprobe)";
		return fs->func_mode;
	case KVMMMU_HIST_PHASE_WALK:
		if (!phases_on(fs, why))
			return false;
		if (fs->func_mode) {
			*why = "needs FNAME(walk_addr_generic) (fentry or kprobe)";
			return attached(fs, "paging64_walk_addr_generic") ||
			       attached(fs, "ept_walk_addr_generic");
		}
		*why = "needs kvm_mmu_pagetable_walk and kvm_mmu_paging_element";
		return attached(fs, "kvm_mmu_paging_element") &&
		       attached(fs, "kvm_mmu_pagetable_walk");
	case KVMMMU_HIST_PHASE_PFN:
		if (!phases_on(fs, why))
			return false;
		*why = fs->func_mode ? "needs kvm_faultin_pfn (fentry or kprobe)"
				     : "no tracepoint shows it: needs kvm_faultin_pfn (fentry or "
				       "kprobe); the rest of the fault (other) holds it";
		return fs->func_mode &&
		       (attached(fs, "kvm_faultin_pfn") || attached(fs, "kvm_mmu_faultin_pfn"));
	case KVMMMU_HIST_PHASE_LOCK: /* the collector checks the mmu_lock probes */
	case KVMMMU_HIST_PHASE_MAP:
	case KVMMMU_HIST_PHASE_OTHER:
		if (!phases_on(fs, why))
			return false;
		/* parts of a fault's time: the fault's, or the tracepoint model's walk-to-SPTE */
		if (fs->func_mode) {
			*why = "needs kvm_mmu_page_fault (fentry or kprobe)";
			return attached(fs, "kvm_mmu_page_fault") &&
			       attached(fs, "kvm_mmu_spte_requested");
		}
		*why = "needs kvm_mmu_pagetable_walk and kvm_mmu_set_spte (shadow paging's faults "
		       "only: tracepoints show no start of a TDP fault)";
		return attached(fs, "kvm_mmu_pagetable_walk") && attached(fs, "kvm_mmu_set_spte");
	case KVMMMU_HIST_MEMSLOT:
		*why = fs->opts->memslot_off ? fs->memslot_off_why
					     : "needs kvm_vcpu_gfn_to_memslot and "
					       "kvm_mmu_page_fault (fentry or kprobe)";
		return attached(fs, "kvm_vcpu_gfn_to_memslot") &&
		       attached(fs, "kvm_mmu_page_fault");
	case KVMMMU_HIST_WALK_TO_SPTE:
		/* The tracepoint model's fault_ns: function probes time the fault itself. */
		if (fs->func_mode) {
			*why = "not measured with function probes: fault_ns times the whole fault";
			return false;
		}
		*why = fs->done_event
			       ? "not measured with the done event by default: fault_ns times "
				 "the whole fault"
			       : "needs kvm_mmu_pagetable_walk and kvm_mmu_set_spte";
		return attached(fs, "kvm_mmu_pagetable_walk") && attached(fs, "kvm_mmu_set_spte");
	}
	*why = "unknown histogram";
	return false;
}

size_t faults_source_tracepoints(struct source_tracepoint *out, size_t max)
{
	for (size_t i = 0; i < FAULTS_N_TP && i < max; i++)
		out[i] = (struct source_tracepoint){faults_tracepoints[i].group,
						    faults_tracepoints[i].event, "faults"};
	return FAULTS_N_TP;
}
