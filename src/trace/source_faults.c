// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "source_faults.h" /* first: the skeleton needs kvmmmu.h's types */
#include "faults.skel.h"
#include "ksyms.h"
#include "log.h"
#include "prog_info.h"
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
static const struct {
	const char *group, *event;
	bool optional;
	bool patched; /* only kernels with kernel-patches/ have it; used in tracepoint mode */
	bool forks;   /* only to follow a command's descendants (follow_forks) */
	bool stacks;  /* only for --stack: where slow faults wait off the CPU */
	size_t progs[N_PROG_SLOTS];
	/*
	 * the tracepoint model's: function probes give what it rebuilds, and
	 * the done event most of it (unless DONE_NEEDS: shadow paging's path
	 * and walk-to-SPTE time, the walk's end for the mmu_lock object), so in
	 * those modes it is attached only for COUNTER, its event count (the
	 * KVMMMU_* one it alone feeds; -1: none), and not with event_counts_off
	 */
	bool model;
	bool done_needs;
	int counter;
} tracepoints[] = {
	{"kvmmmu", "kvm_mmu_pagetable_walk", false, false, false, false,
	 TP_PROGS(kvm_mmu_pagetable_walk), true, true, KVMMMU_GUEST_WALKS},
	{"kvmmmu", "kvm_mmu_walker_error", false, false, false, false,
	 TP_PROGS(kvm_mmu_walker_error), true, true, KVMMMU_WALKER_ERRORS},
	{"kvmmmu", "kvm_mmu_spte_requested", false, false, false, false,
	 TP_PROGS(kvm_mmu_spte_requested), false, false, -1},
	{"kvmmmu", "kvm_mmu_set_spte", false, false, false, false, TP_PROGS(kvm_mmu_set_spte),
	 false, false, -1},
	{"kvmmmu", "fast_page_fault", false, false, false, false, TP_PROGS(fast_page_fault), false,
	 false, -1},
	{"kvmmmu", "kvm_tdp_mmu_spte_changed", false, false, false, false,
	 TP_PROGS(kvm_tdp_mmu_spte_changed), true, false, KVMMMU_TDP_SPTE_CHANGES},
	{"kvmmmu", "handle_mmio_page_fault", false, false, false, false,
	 TP_PROGS(handle_mmio_page_fault), true, false, KVMMMU_MMIO_FAULTS},
	{"kvmmmu", "mark_mmio_spte", false, false, false, false, TP_PROGS(mark_mmio_spte), false,
	 false, -1},
	{"kvmmmu", "kvm_mmu_paging_element", true, false, false, false,
	 TP_PROGS(kvm_mmu_paging_element), false, false, -1},
	/* every counted fault's outcome and duration, where kernel-patches/ adds it */
	{"kvmmmu", "kvm_mmu_page_fault_done", false, true, false, false,
	 TP_PROGS(kvm_mmu_page_fault_done), false, false, -1},
	{"kvm", "kvm_page_fault", false, false, false, false, TP_PROGS(kvm_page_fault), true, false,
	 KVMMMU_PF_EXITS},
	/* end the faults of page-fault exits that requested no SPTE (tracepoint model) */
	{"kvm", "kvm_emulate_insn", false, false, false, false, TP_PROGS(kvm_emulate_insn), true,
	 false, -1},
	{"kvm", "kvm_userspace_exit", false, false, false, false, TP_PROGS(kvm_userspace_exit),
	 true, true, -1},
	/* frees exited threads' entries */
	{"sched", "sched_process_exit", false, false, false, false, TP_PROGS(sched_process_exit),
	 false, false, -1},
	/* a command's children join the filter: sudo, timeout, a wrapper script */
	{"sched", "sched_process_fork", false, false, true, false, TP_PROGS(sched_process_fork),
	 false, false, -1},
	/* --stack: a slow fault's waits off the CPU, and their stacks */
	{"sched", "sched_switch", false, false, false, true, TP_PROGS(sched_switch), false, false,
	 -1},
};

/*
 * Function probes; those with exit programs also need a return probe. An
 * fexit program reads the return value after the arguments, at a fixed
 * index: RET_ARG says where (the arguments the 5.16+ prototype has), -1
 * where it reads none. A kernel with another prototype gets the kretprobe,
 * which reads it from the return register whatever the arguments.
 */
static const struct {
	const char *func;
	bool defines_outcome; /* needed for function-probe outcomes */
	bool may_be_absent;   /* a handler some kernels do not build: absent, it takes no fault */
	int ret_arg;
	size_t progs[N_PROG_SLOTS];
	bool phase;	  /* times a phase of a fault: only with --metric phases */
	bool alternative; /* another name of the function before it: probed if that one is not */
	bool memslot;	  /* the memslot figures' only: not probed without them (memslot_off) */
} functions[] = {
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

#define N_TP (sizeof(tracepoints) / sizeof(tracepoints[0]))
#define N_FUNC (sizeof(functions) / sizeof(functions[0]))
_Static_assert(N_FUNC + N_TP <= FAULTS_MAX_PROBES, "every probe point has a status");

/* Probe point I's programs in the loaded skeleton: the functions first, then the tracepoints. */
static struct probe_progs progs_of(const struct faults_source *fs, size_t i)
{
	struct probe_progs pp;

	probe_progs_of(&pp, fs->skel,
		       i < N_FUNC ? functions[i].progs : tracepoints[i - N_FUNC].progs);
	return pp;
}

static int decode_ret_pf(struct faults_source *fs)
{
	struct btf *b = kernel_btf_kvm_types(&fs->engine->kb);
	char *fmt;
	int err = -ENOENT;

	if (b && !ret_pf_from_btf(&fs->ret_pf, b))
		return 0;
	fmt = tracefs_read_format("kvmmmu", "fast_page_fault");
	if (fmt) {
		err = ret_pf_from_format(&fs->ret_pf, fmt);
		free(fmt);
	}
	return err;
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
 * Whether function I is to be probed: the memslot lookup only for the
 * memslot figures; a phase's function with --metric phases, where the
 * kernel has it, and for another name of the function before it only when
 * that one is not probed. Says why not in WHY (SIZE).
 */
static bool function_wanted(const struct faults_source *fs, size_t i,
			    const enum attach_kind func_kind[N_FUNC], char *why, size_t size)
{
	if (functions[i].memslot && fs->opts->memslot_off) {
		if (size)
			snprintf(why, size, "%s", fs->memslot_off_why);
		return false;
	}
	if (!functions[i].phase)
		return true;
	if (!fs->opts->phases) {
		if (size)
			snprintf(why, size, "%s", fs->phases_off_why);
		return false;
	}
	if (functions[i].alternative && i > 0 && func_kind[i - 1] != ATTACH_NONE) {
		if (size)
			snprintf(why, size, "not needed: %s is probed", functions[i - 1].func);
		return false;
	}
	if (ksym_lookup(NULL, functions[i].func) != KSYM_PRESENT) {
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
	return functions[i].defines_outcome && functions[i].ret_arg >= 0;
}

static void plan(struct faults_source *fs, const enum attach_kind func_kind[N_FUNC],
		 const bool raw_only[N_TP])
{
	bool outcome_funcs = true, done = false;
	struct faults_bpf__rodata *ro = fs->skel->rodata;

	fs->n_probes = 0;
	for (size_t i = 0; i < N_FUNC; i++) {
		struct probe_status *p = &fs->probes[fs->n_probes++];
		enum attach_kind k = func_kind[i];
		struct probe_progs pp;

		p->name = functions[i].func;
		/* a phase's function this kernel lacks, or does not need, is no loss */
		p->wanted = function_wanted(fs, i, func_kind, NULL, 0);
		p->kind = k;
		pp = progs_of(fs, i);
		probe_progs_plan(&pp, k);
		if (is_handler(i) && !handler_entries_needed(fs)) {
			bpf_program__set_autoload(pp.prog[SLOT_FENTRY], false);
			bpf_program__set_autoload(pp.prog[SLOT_KPROBE], false);
		}
		if (functions[i].defines_outcome && k == ATTACH_NONE &&
		    !(functions[i].may_be_absent && ksym_lookup(NULL, p->name) != KSYM_PRESENT))
			outcome_funcs = false;
	}
	/* the done event ends faults where the kernel has it and no function probe does */
	for (size_t i = 0; i < N_TP && !outcome_funcs; i++)
		if (tracepoints[i].patched &&
		    tracefs_has_event(tracepoints[i].group, tracepoints[i].event))
			done = true;
	for (size_t i = 0; i < N_TP; i++) {
		struct probe_status *p = &fs->probes[fs->n_probes++];
		bool btf = attach_tp_btf_usable(fs->engine, tracepoints[i].event) && !raw_only[i];
		struct probe_progs pp = progs_of(fs, N_FUNC + i);

		p->name = tracepoints[i].event;
		p->group = tracepoints[i].group;
		p->optional = tracepoints[i].optional;
		/* the optional one, kvm_mmu_paging_element, ends the walk phase without functions
		 */
		p->wanted = tracepoints[i].forks ? fs->opts->follow_forks
			    : tracepoints[i].stacks
				    ? fs->opts->slow_stacks
				    : !p->optional || (fs->opts->phases && !outcome_funcs);
		if (tracepoints[i].forks && !p->wanted) {
			snprintf(p->why, sizeof(p->why), "not needed: no command to follow");
		} else if (tracepoints[i].stacks && !p->wanted) {
			snprintf(p->why, sizeof(p->why), "not needed: no --stack");
		} else if (tracepoints[i].model &&
			   (outcome_funcs || (done && !tracepoints[i].done_needs)) &&
			   (tracepoints[i].counter < 0 || fs->opts->event_counts_off)) {
			p->wanted = false;
			snprintf(p->why, sizeof(p->why), "not needed: %s gives outcomes%s",
				 outcome_funcs ? "each handler's return"
					       : "kvm_mmu_page_fault_done",
				 tracepoints[i].counter < 0
					 ? ""
					 : " (kvmmmu-hist --metric events counts it)");
		} else if (tracepoints[i].patched && outcome_funcs) {
			p->wanted = false; /* the function probes give outcome and duration */
			snprintf(p->why, sizeof(p->why),
				 "not needed: function probes give outcomes");
		} else if (tracepoints[i].patched &&
			   !tracefs_has_event(tracepoints[i].group, tracepoints[i].event)) {
			p->wanted = false;
			snprintf(p->why, sizeof(p->why),
				 "not in this kernel (kernel-patches/ adds it)");
		} else if (!p->wanted && fs->opts->phases) {
			snprintf(p->why, sizeof(p->why),
				 "not needed: function probes time the walk");
		} else if (!p->wanted) {
			snprintf(p->why, sizeof(p->why), "%s (costs an event per guest PTE)",
				 fs->phases_off_why);
		}
		p->kind = !p->wanted ? ATTACH_NONE : btf ? ATTACH_TP_BTF : ATTACH_RAW_TP;
		if (tracepoints[i].patched && p->wanted)
			fs->done_event = true;
		probe_progs_plan(&pp, p->kind);
	}
	fs->func_mode = outcome_funcs;
	ro->func_mode = outcome_funcs;
	for (size_t i = 0; i < N_FUNC; i++)
		if (!strcmp(functions[i].func, "direct_page_fault"))
			ro->direct_probed = func_kind[i] != ATTACH_NONE;
	ro->handler_entries = handler_entries_needed(fs);
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

/*
 * Program BP failed to load: one program must not fail the whole object.
 * A tp_btf program falls back to its raw_tp twin, an fentry/fexit pair to
 * its kprobes (or nothing); anything else is a real failure (false).
 */
static bool load_another_way(struct faults_source *fs, const struct bpf_program *bp,
			     enum attach_kind func_kind[N_FUNC], bool raw_only[N_TP])
{
	for (size_t i = 0; bp && i < N_FUNC + N_TP; i++) {
		struct probe_progs pp = progs_of(fs, i);

		if (!probe_progs_has(&pp, bp))
			continue;
		if (i >= N_FUNC && pp.prog[SLOT_TP_BTF] == bp && !raw_only[i - N_FUNC]) {
			raw_only[i - N_FUNC] = true;
			/* recovered: a note for -v, the log with it */
			vlog("note: %s: the tp_btf program does not load here; using raw_tp",
			     tracepoints[i - N_FUNC].event);
			return true;
		}
		if (i < N_FUNC && func_kind[i] == ATTACH_FENTRY &&
		    (pp.prog[SLOT_FENTRY] == bp || pp.prog[SLOT_FEXIT] == bp)) {
			func_kind[i] = attach_kprobe_pmu() && fs->opts->mode != PROBE_MODE_FENTRY
					       ? ATTACH_KPROBE
					       : ATTACH_NONE;
			snprintf(fs->probes[i].why, sizeof(fs->probes[i].why),
				 "fentry: %s does not load here", bpf_program__name(bp));
			vlog("note: %s does not load here; %s", bpf_program__name(bp),
			     func_kind[i] == ATTACH_KPROBE ? "using kprobes" : "not probed");
			return true;
		}
		return false;
	}
	return false;
}

/*
 * The load failed and no watched program's log says which was refused (a
 * refusal before the verifier ran): once, every watched program the other
 * way (tp_btf as raw_tp, fentry as kprobes), before giving up.
 */
static bool every_other_way(struct faults_source *fs, bool *done,
			    enum attach_kind func_kind[N_FUNC], bool raw_only[N_TP])
{
	bool changed = false;

	if (*done || !fs->watch.n)
		return false;
	*done = true;
	for (size_t i = 0; i < N_TP; i++) {
		changed |= !raw_only[i];
		raw_only[i] = true;
	}
	for (size_t i = 0; i < N_FUNC; i++) {
		if (func_kind[i] != ATTACH_FENTRY)
			continue;
		func_kind[i] = attach_kprobe_pmu() && fs->opts->mode != PROBE_MODE_FENTRY
				       ? ATTACH_KPROBE
				       : ATTACH_NONE;
		snprintf(fs->probes[i].why, sizeof(fs->probes[i].why),
			 "fentry: the object did not load with it");
		changed = true;
	}
	if (changed)
		vlog("note: the faults object did not load, and no program's log says why: "
		     "loading it with raw_tp and kprobes instead");
	return changed;
}

/*
 * A forced --probe-mode fentry or kprobe is a promise of exact outcomes from
 * the handlers: when one of them cannot be had that way, say why and stop,
 * rather than fall back to tracepoints behind the user's back.
 */
static int check_forced_mode(struct faults_source *fs, const enum attach_kind func_kind[N_FUNC])
{
	if (fs->opts->mode != PROBE_MODE_FENTRY && fs->opts->mode != PROBE_MODE_KPROBE)
		return 0;
	for (size_t i = 0; i < N_FUNC; i++) {
		if (!functions[i].defines_outcome || func_kind[i] != ATTACH_NONE)
			continue;
		if (functions[i].may_be_absent &&
		    ksym_lookup(NULL, functions[i].func) != KSYM_PRESENT)
			continue;
		elog("%s%s: %s cannot be probed: %s", fs->engine->mode_origin,
		     probe_mode_names[fs->opts->mode], functions[i].func,
		     fs->probes[i].why[0] ? fs->probes[i].why : "attach failed");
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * The mmu_lock table, to free an exited VM's slots (threads.c). Without it
 * the table can only fill up, and contention_begin then checks every rwlock
 * the slow way: slower, not wrong.
 */
static void map_lock_table(struct faults_source *fs)
{
	void *p = mmap(NULL, sizeof(struct kvmmmu_lock_table), PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(fs->skel->maps.mmu_locks), 0);

	fs->lock_table = p == MAP_FAILED ? NULL : p;
	if (!fs->lock_table)
		vlog("mmu_lock table: mmap: %s", strerror(errno));
}

/* The faults object's programs, planned for the choices so far; 0 or -errno (said). */
static int open_faults(struct faults_source *fs, const enum attach_kind func_kind[N_FUNC],
		       const bool raw_only[N_TP])
{
	__u32 ring; /* the slow-fault ring's bytes: --stack's records are 512 bytes longer */
	int err;

	fs->skel = faults_bpf__open();
	if (!fs->skel) {
		err = -errno;
		elog("cannot open the BPF object: %s", strerror(-err));
		log_libbpf_excerpt();
		return err;
	}
	plan(fs, func_kind, raw_only);
	thread_maps_size(&fs->sizes, fs->skel->maps.thread_stats);
	bpf_map__set_max_entries(fs->skel->maps.seen_procs, fs->sizes.max_threads);
	bpf_map__set_max_entries(fs->skel->maps.region_faults, fs->opts->region_shift ? 16384 : 1);
	/*
	 * A page when unused; with --slower room for 7000 records between two
	 * drains, and for 6000 of --stack's (each with 512 bytes of stack)
	 */
	ring = fs->opts->slow_stacks ? 1 << 22 : fs->opts->slower_ns ? 1 << 20 : 0;
	bpf_map__set_max_entries(fs->skel->maps.slow_faults,
				 ring ? ring : (__u32)sysconf(_SC_PAGESIZE));
	/* --stack: two stacks a thread (512 bytes each), made as they are first needed */
	bpf_map__set_max_entries(fs->skel->maps.wait_stacks,
				 fs->opts->slow_stacks ? fs->sizes.max_threads : 1);
	/* a program with a way around its failure to load is watched */
	for (size_t i = 0; i < N_FUNC + N_TP; i++) {
		struct probe_progs pp = progs_of(fs, i);

		if (i < N_FUNC ? func_kind[i] == ATTACH_FENTRY : !raw_only[i - N_FUNC]) {
			err = load_watch_add(&fs->watch, &pp);
			if (err)
				return err;
		}
	}
	return 0;
}

static void close_faults(struct faults_source *fs)
{
	attach_links_destroy(&fs->links);
	faults_bpf__destroy(fs->skel);
	fs->skel = NULL;
	load_watch_free(&fs->watch);
}

void faults_source_arm(struct faults_source *fs)
{
	fs->skel->bss->armed = true;
}

int faults_source_trace_pid(struct faults_source *fs, int pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(fs->skel->maps.traced_pids), &key, &one, BPF_ANY))
		return -errno;
	return 0;
}

__u64 faults_source_prog_missed(const struct faults_source *fs)
{
	struct prog_info_sum sum = {};

	prog_info_add(fs->skel->obj, &sum);
	return sum.recursion_misses;
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

/* --metric phases asked for the phases' probes. */
static bool phases_on(const struct faults_source *fs, const char **why)
{
	*why = fs->phases_off_why;
	return fs->opts->phases;
}

bool faults_source_counted(const struct faults_source *fs, int counter)
{
	for (size_t i = 0; i < N_TP; i++)
		if (tracepoints[i].model && tracepoints[i].counter == counter)
			return attached(fs, tracepoints[i].event);
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
		       "and "
		       "the fast_page_fault tracepoint";
		return fs->func_mode && attached(fs, "fast_page_fault");
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
		*why = "needs kvm_mmu_pagetable_walk and kvm_mmu_set_spte";
		return attached(fs, "kvm_mmu_pagetable_walk") && attached(fs, "kvm_mmu_set_spte");
	}
	*why = "unknown histogram";
	return false;
}

int faults_source_open(struct faults_source *fs, const struct source_env *env,
		       struct threads *threads)
{
	enum attach_kind func_kind[N_FUNC];
	bool raw_only[N_TP] = {}, all_other_ways = false;
	int err, attempt;

	memset(fs, 0, sizeof(*fs));
	fs->opts = env->opts;
	snprintf(fs->memslot_off_why, sizeof(fs->memslot_off_why), "off: %s",
		 fs->opts->memslot_option ? fs->opts->memslot_option : "--metric memslot");
	snprintf(fs->phases_off_why, sizeof(fs->phases_off_why), "off: %s",
		 fs->opts->phases_option ? fs->opts->phases_option : "--metric phases");
	fs->engine = env->engine;
	fs->sizes = env->sizes;
	fs->threads = threads;
	err = decode_ret_pf(fs);
	if (err) {
		elog("cannot decode RET_PF_* values: no RET_PF_ enumerators in BTF and no "
		     "usable kvmmmu:fast_page_fault format");
		return err;
	}
	{
		/* every name any object asks kallsyms about, in one pass */
		const char *names[N_FUNC + 4];
		size_t n = 0;

		for (size_t i = 0; i < N_FUNC; i++)
			names[n++] = functions[i].func;
		names[n++] = "kvm_mmu_load";
		names[n++] = "kvm_mmu_free_roots";
		names[n++] = "queued_write_lock_slowpath";
		names[n++] = "fast_page_fault";
		ksym_prefetch(names, n);
	}
	for (size_t i = 0; i < N_FUNC; i++) {
		char *why = fs->probes[i].why;

		if (!function_wanted(fs, i, func_kind, why, sizeof(fs->probes[i].why))) {
			func_kind[i] = ATTACH_NONE;
			continue;
		}
		func_kind[i] = attach_choose_function(fs->engine, functions[i].func, why,
						      sizeof(fs->probes[i].why));
		if (func_kind[i] == ATTACH_FENTRY)
			func_kind[i] = attach_check_prototype(fs->engine, functions[i].func,
							      functions[i].ret_arg, why,
							      sizeof(fs->probes[i].why));
	}
	err = check_forced_mode(fs, func_kind);
	if (err)
		return err;

	/* An attach that fails after load changes what the programs must do: reload without it. */
	for (attempt = 0; attempt < 1 + (int)(N_FUNC + N_TP); attempt++) {
		bool retry = false;

		log_libbpf_forget();
		err = open_faults(fs, func_kind, raw_only);
		if (err && !fs->skel)
			return err; /* said */
		if (!err)
			err = faults_bpf__load(fs->skel);
		if (err && err != -EPERM &&
		    (load_another_way(fs, load_watch_failed(&fs->watch), func_kind, raw_only) ||
		     every_other_way(fs, &all_other_ways, func_kind, raw_only))) {
			close_faults(fs);
			err = check_forced_mode(fs, func_kind);
			if (err)
				return err;
			continue;
		}
		if (err) {
			elog("cannot load the BPF programs: %s%s", strerror(-err),
			     err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)"
					   : "");
			/* nothing loaded: now libbpf's words matter, unless the kernel said no */
			if (err != -EPERM)
				log_libbpf_excerpt();
			close_faults(fs);
			return err;
		}
		load_watch_free(&fs->watch);
		/* the filter holds its processes before any program runs: none is missed */
		for (size_t i = 0; fs->opts->filter_pids && i < fs->opts->n_pids; i++) {
			err = faults_source_trace_pid(fs, fs->opts->pids[i]);
			if (err) {
				elog("cannot add pid %d to the BPF filter: %s", fs->opts->pids[i],
				     strerror(-err));
				close_faults(fs);
				return err;
			}
		}
		for (size_t i = 0; i < fs->n_probes && !retry; i++) {
			struct probe_status *p = &fs->probes[i];
			struct probe_progs pp = progs_of(fs, i);

			if (p->kind == ATTACH_NONE)
				continue;
			if (attach_probe(fs->engine, &fs->links, &pp, 1, p) && i < N_FUNC) {
				func_kind[i] = ATTACH_NONE;
				retry = true;
				/* another name of the same function: it may attach where this did
				 * not */
				if (i + 1 < N_FUNC && functions[i + 1].alternative)
					func_kind[i + 1] = attach_choose_function(
						fs->engine, functions[i + 1].func,
						fs->probes[i + 1].why,
						sizeof(fs->probes[i + 1].why));
			}
		}
		if (!retry) {
			map_lock_table(fs);
			return 0;
		}
		err = check_forced_mode(fs, func_kind);
		close_faults(fs);
		if (err)
			return err;
	}
	return -ELOOP;
}

void faults_source_shared(const struct faults_source *fs, struct shared_maps *maps)
{
	maps->traced_pids = bpf_map__fd(fs->skel->maps.traced_pids);
	maps->thread_stats = bpf_map__fd(fs->skel->maps.thread_stats);
	maps->thread_news = bpf_map__fd(fs->skel->maps.thread_news);
	maps->seen_procs = bpf_map__fd(fs->skel->maps.seen_procs);
	maps->mmu_locks = bpf_map__fd(fs->skel->maps.mmu_locks);
	maps->vm_births = bpf_map__fd(fs->skel->maps.vm_births);
}

const struct kvmmmu_health *faults_source_health(const struct faults_source *fs)
{
	return &fs->skel->bss->health;
}

void faults_source_close(struct faults_source *fs)
{
	if (fs->lock_table)
		munmap(fs->lock_table, sizeof(*fs->lock_table));
	close_faults(fs);
	regions_free(&fs->regions_done);
	regions_free(&fs->storms);
	slow_faults_free(&fs->slow);
	kernel_symbols_free(fs->ksyms);
	free(fs->retired);
	ret_pf_free(&fs->ret_pf);
	memset(fs, 0, sizeof(*fs));
}

size_t faults_source_tracepoints(struct source_tracepoint *out, size_t max)
{
	for (size_t i = 0; i < N_TP && i < max; i++)
		out[i] = (struct source_tracepoint){tracepoints[i].group, tracepoints[i].event,
						    "faults"};
	return N_TP;
}
