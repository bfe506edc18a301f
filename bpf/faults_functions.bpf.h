/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The function-probe model (func_mode == true): fentry/fexit, or
 * kprobe/kretprobe, on kvm_mmu_page_fault, the page-fault handlers,
 * direct_page_fault and kvm_vcpu_gfn_to_memslot: exact RET_PF_* values, and
 * each fault's time, whole and to its handler's end.
 */
#ifndef KVMMMU_FAULTS_FUNCTIONS_BPF_H
#define KVMMMU_FAULTS_FUNCTIONS_BPF_H

/* ---- function probes: fentry/fexit and kprobe/kretprobe twins ---- */

/*
 * The handlers' entry programs are attached only for the figures that need
 * to know a fault's handler has started (the memslot figures: the lookups
 * before it; the phases, and --slower's: the walk and host page inside it),
 * in whichever tool asks for them. Without them a fault makes a program run
 * fewer: its handler's exit alone gives the outcome and path, and the fast
 * and slow paths are timed from the fault's start.
 */
const volatile bool handler_entries = true;
/* BTF: VCPU is fentry's typed pointer, read by direct loads; else kprobe's number. */
static __always_inline int on_fault_entry(struct kvm_vcpu *vcpu, u64 cr2_or_gpa, u64 error_code,
					  bool btf)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s || !armed)
		return 0;
	/*
	 * The previous fault never returned as far as we saw: its fexit was
	 * skipped (up to 6.12 the kernel skips the fexit programs of calls in
	 * flight when another program's attach or detach replaces the function's
	 * trampoline; from 7.2 a run preempted elsewhere, prog_missed) or its
	 * kretprobe missed. Nothing nests here: say so, do not guess.
	 */
	if (s->st.in_fault)
		__sync_fetch_and_add(&health.exits_lost, 1);
	s->st.fault_ts = start_timing(s) ? bpf_ktime_get_ns() : 0;
	s->st.in_fault = 1;
	/* only where function probes end faults: else the tracepoint model does it */
	if (phases && func_mode)
		phases_start(s);
	slow_start(s);
	s->st.fault_addr = cr2_or_gpa;
	s->st.access = kvmmmu_access_from_pferr(error_code);
	s->st.handled = 0;
	s->st.pre_lookups = 0;
	s->st.fast_resolved = 0;
	s->st.direct = 0;
	/* a prefetch's request before this fault, which no kvm_mmu_set_spte ended */
	if (func_mode)
		s->st.pending = 0;
	if (fast_at_return) {
		s->st.fault_vcpu = (__u64)vcpu;
		if (btf)
			s->st.pf_fast = vcpu ? vcpu->stat.pf_fast : 0;
		else
			s->st.pf_fast = BPF_CORE_READ(vcpu, stat.pf_fast);
	}
	return 0;
}

/*
 * fast_at_return: whether the fault's fast path fixed it (or found it
 * spurious), as KVM counts that: fast_page_fault() adds to the vCPU's
 * pf_fast then, and only then, and runs once a fault. BTF_VCPU: the same
 * vCPU as a typed pointer (a handler's fexit), read by a direct load; NULL:
 * the one the fault's entry kept, by a helper.
 */
static __always_inline bool fixed_on_fast_path(struct kvmmmu_thread_stats *s,
					       struct kvm_vcpu *btf_vcpu)
{
	struct kvm_vcpu *vcpu = (void *)s->st.fault_vcpu;

	/* (more, not other: a debugfs write may zero the statistic meanwhile) */
	/* (the same vCPU: a fault's exit skipped, its state may be another's) */
	if (btf_vcpu)
		return btf_vcpu == vcpu && btf_vcpu->stat.pf_fast > s->st.pf_fast;
	return vcpu && BPF_CORE_READ(vcpu, stat.pf_fast) > s->st.pf_fast;
}

/* --slower: the fault took NS; its cr2_or_gpa is shadow paging's GVA, else the GPA. */
static __always_inline void report_fault_slow(struct kvmmmu_thread_stats *s, __u64 ns)
{
	__u64 gfn = s->st.fault_gfn, addr = s->st.fault_addr;

	if (s->st.last_path == KVMMMU_FP_SHADOW)
		report_slow(s, ns, s->st.last_ret, s->st.last_path, addr,
			    gfn == ~0ULL ? ~0ULL : gfn << 12 | (addr & 0xfff));
	else
		report_slow(s, ns, s->st.last_ret, s->st.last_path, ~0ULL, addr);
}

static __always_inline int on_fault_exit(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s || !s->st.in_fault)
		return 0;
	/*
	 * Whole faults only, as many as are counted: an exit on an MMIO SPTE is
	 * emulated without a handler (handle_mmio_page_fault) and is no fault.
	 */
	if (s->st.fault_ts && s->st.handled) {
		__u64 ns = bpf_ktime_get_ns() - s->st.fault_ts;

		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_FAULT], ns);
		/* a handler not probed: the tracepoint model ends faults, and their phases */
		if (func_mode) {
			report_fault_slow(s, ns);
			phases_close(s, ns);
		}
	}
	/*
	 * A handler's exit lost (its fexit skipped, see on_fault_entry()) where
	 * its entry is not probed to tell: the fast path (its tracepoint, or
	 * KVM's pf_fast) or an SPTE request shows it ran. Without them it looks
	 * like the MMIO exit below.
	 */
	if (!handler_entries && !s->st.handled &&
	    (s->st.fast_resolved || s->st.pending || s->st.direct ||
	     (fast_at_return && fixed_on_fast_path(s, NULL))))
		__sync_fetch_and_add(&health.exits_lost, 1);
	/* no handler ran: an MMIO SPTE's exit, emulated; its lookups were no fault's */
	s->counters[KVMMMU_MEMSLOT_OTHER] += s->st.pre_lookups;
	s->st.pre_lookups = 0;
	s->st.in_fault = 0;
	s->st.fault_ts = 0;
	return 0;
}

static __always_inline int on_handler_entry(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s || !armed)
		return 0;
	if (s->st.in_handler) /* as in on_fault_entry() */
		__sync_fetch_and_add(&health.exits_lost, 1);
	s->st.in_handler = 1;
	/* kvm_mmu_do_page_fault() looked up the fault's memslot before calling us */
	if (s->st.in_fault && s->st.pre_lookups) {
		s->counters[KVMMMU_MEMSLOT_LOOKUPS] += s->st.pre_lookups;
		if (s->st.pre_lookup_ns)
			kvmmmu_hist_add(&s->hist[KVMMMU_HIST_MEMSLOT], s->st.pre_lookup_ns);
		s->st.pre_lookups = 0;
	}
	s->st.fast_resolved = 0;
	s->st.direct = 0;
	return 0;
}

/* direct_page_fault is probed: it tells the legacy MMU's faults from the TDP MMU's. */
const volatile bool direct_probed = false;

/* Which MMU a page-fault handler is: its faults' path, unless the fast path fixed them. */
enum handler_kind {
	HANDLER_TDP,	   /* kvm_tdp_page_fault: the TDP MMU, or the legacy one (st.direct) */
	HANDLER_SHADOW,	   /* paging64/paging32/ept_page_fault: shadow paging */
	HANDLER_NONPAGING, /* nonpaging_page_fault: guest paging off, the legacy direct MMU */
};

/*
 * The level the fault's own SPTE was set at, from the fault (FAULT, or the
 * request's pointer: a kretprobe has no arguments) at its handler's return,
 * while kvm_mmu_do_page_fault() still holds it; kvm_mmu_set_spte is attached
 * only for its counts. Every MMU sets it at goal_level, after
 * disallowed_hugepage_adjust() lowered that for NX huge pages. FIXED set
 * one. A write-protected fault (EMULATE before 6.12; with a memslot, not an
 * MMIO SPTE) set one under the TDP MMU, which traces its SPTE every time,
 * while shadow paging and the legacy MMU's mmu_set_spte() set one only if
 * it changed, which the return does not say: not counted.
 */
static __always_inline __u8 installed_level(struct kvmmmu_thread_stats *s,
					    struct kvm_page_fault *fault, int ret, bool tdp_mmu)
{
	struct kvm_page_fault *request = (void *)s->st.request_fault;

	/* no request of this fault's (slow_start() forgot the last one's) */
	if (!s->st.level_requested)
		return 0;
	if (ret != ret_pf_fixed &&
	    !(tdp_mmu && ret == ret_pf_write_protected && s->st.request_slot))
		return 0;
	if (fault)
		return fault->goal_level;
	return BPF_CORE_READ(request, goal_level);
}

/*
 * The handler kvm_mmu_do_page_fault() called ends the fault: its return
 * value is the RET_PF_* outcome. Each of the five (kvm_tdp_page_fault, the
 * shadow MMU's paging64/paging32/ept_page_fault, nonpaging_page_fault) is
 * probed, so every fault is counted once whichever takes it. Faults outside
 * kvm_mmu_page_fault (prefetch, async-PF completion, KVM_PRE_FAULT_MEMORY)
 * are not counted, as KVM's pf_taken does not count them.
 */
static __always_inline int on_handler_exit(long ret, enum handler_kind kind,
					   struct kvm_page_fault *fault, struct kvm_vcpu *vcpu)
{
	struct kvmmmu_thread_stats *s = thread();
	enum kvmmmu_fault_path path;

	if (!s || (handler_entries && !s->st.in_handler))
		return 0;
	/* one handler a fault: kvm_mmu_do_page_fault() calls it once */
	if (s->st.in_fault && !s->st.handled) {
		s->st.handled = 1;
		count_fault(s);
		s->st.last_ret = (int)ret;
		if (fast_at_return && fixed_on_fast_path(s, vcpu)) {
			s->st.fast_resolved = 1;
			if (region_shift) /* its GPA: a direct MMU's (no guest walk) */
				count_region(s, s->st.fault_addr, -1);
			count_fast_fix(s);
		}
		if (s->st.fast_resolved)
			path = KVMMMU_FP_FAST;
		else if (kind == HANDLER_SHADOW)
			path = KVMMMU_FP_SHADOW;
		else if (kind == HANDLER_NONPAGING || s->st.direct ||
			 (!direct_probed && !thread_vm_tdp_mmu(s)))
			path = KVMMMU_FP_DIRECT;
		else
			path = KVMMMU_FP_TDP_MMU;
		s->st.level_installed =
			installed_level(s, fault, (int)ret, path == KVMMMU_FP_TDP_MMU);
		count_installed_level(s, (int)ret); /* kept for a slow record */
		count_ret(s, (int)ret, path);
		s->st.last_path = path;
		if (path != KVMMMU_FP_FAST) {
			s->counters[KVMMMU_PATH_FAST + path]++;
			if (s->st.fault_ts)
				kvmmmu_hist_add(&s->hist[KVMMMU_HIST_SLOW],
						bpf_ktime_get_ns() - s->st.fault_ts);
		}
	}
	s->st.in_handler = 0;
	/* its request ends with it, set or not (an MMIO SPTE's mark_mmio_spte is not attached) */
	s->st.pending = 0;
	return 0;
}

/* The legacy direct MMU handles this fault, not the TDP MMU. */
static __always_inline int on_direct_entry(struct kvm_vcpu *vcpu)
{
	struct kvmmmu_thread_stats *s = thread();

	if (s && !vm_tdp_mmu_enabled(vcpu))
		s->st.direct = 1;
	return 0;
}

static __always_inline int on_memslot_entry(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (s)
		s->st.memslot_ts = s->st.in_fault && s->st.timed ? bpf_ktime_get_ns() : 0;
	return 0;
}

static __always_inline int on_memslot_exit(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s)
		return 0;
	/* outside a fault, or the emulation that follows a handled one */
	if (!s->st.in_fault || s->st.handled) {
		s->counters[KVMMMU_MEMSLOT_OTHER]++;
		s->st.memslot_ts = 0;
		return 0;
	}
	/* before a handler: the fault's only if one is called (on_handler_entry) */
	if (!s->st.in_handler) {
		s->st.pre_lookups++;
		s->st.pre_lookup_ns = s->st.memslot_ts ? bpf_ktime_get_ns() - s->st.memslot_ts : 0;
		s->st.memslot_ts = 0;
		return 0;
	}
	s->counters[KVMMMU_MEMSLOT_LOOKUPS]++;
	if (s->st.memslot_ts)
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_MEMSLOT],
				bpf_ktime_get_ns() - s->st.memslot_ts);
	s->st.memslot_ts = 0;
	return 0;
}

/* (vcpu, cr2_or_gpa, error_code, insn, insn_len): the error code in PFERR_* bits on every vendor */
FUNC_PAIR_ARGS_TYPED(kvm_mmu_page_fault, on_fault_entry(vcpu, cr2_or_gpa, error_code, true),
		     on_fault_entry(vcpu, cr2_or_gpa, error_code, false), on_fault_exit(),
		     struct kvm_vcpu *vcpu, u64 cr2_or_gpa, u64 error_code)

/* A page-fault handler's probes: fsession, fentry/fexit and kprobe/kretprobe. */
#define HANDLER_PROBES(func, kind)                                                                 \
	FSESSION_PROG(func, on_handler_entry(), on_handler_exit(ret, kind, fault, vcpu),           \
		      struct kvm_vcpu *vcpu, struct kvm_page_fault *fault, int ret)                \
	SEC("fentry/" #func)                                                                       \
	int BPF_PROG(func##_fentry)                                                                \
	{                                                                                          \
		return on_handler_entry();                                                         \
	}                                                                                          \
	SEC("fexit/" #func)                                                                        \
	int BPF_PROG(func##_fexit, struct kvm_vcpu *vcpu, struct kvm_page_fault *fault, int ret)   \
	{                                                                                          \
		return on_handler_exit(ret, kind, fault, vcpu);                                    \
	}                                                                                          \
	SEC("kprobe/" #func)                                                                       \
	int BPF_KPROBE(func##_kprobe)                                                              \
	{                                                                                          \
		return on_handler_entry();                                                         \
	}                                                                                          \
	SEC("kretprobe/" #func)                                                                    \
	int BPF_KRETPROBE(func##_kretprobe, int ret)                                               \
	{                                                                                          \
		return on_handler_exit(ret, kind, NULL, NULL);                                     \
	}

HANDLER_PROBES(kvm_tdp_page_fault, HANDLER_TDP)
HANDLER_PROBES(paging64_page_fault, HANDLER_SHADOW)
HANDLER_PROBES(paging32_page_fault, HANDLER_SHADOW)
HANDLER_PROBES(ept_page_fault, HANDLER_SHADOW)
HANDLER_PROBES(nonpaging_page_fault, HANDLER_NONPAGING)

FUNC_ENTRY(direct_page_fault, on_direct_entry(vcpu), struct kvm_vcpu *vcpu)
FUNC_PAIR(kvm_vcpu_gfn_to_memslot, on_memslot_entry(), on_memslot_exit())

/*
 * --metric phases: a timed fault's guest walk and host-page lookup, each a
 * function of its own (neither nests in the other). Those of a handler
 * only: the emulator walks too, after the handler, for its own reasons.
 */
static __always_inline int on_phase_entry(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (func_mode && s && s->st.in_handler && s->st.fault_ts)
		s->st.phase_ts = bpf_ktime_get_ns();
	return 0;
}

/* ... and its end: the walk's time, or the host page's (PFN). */
static __always_inline int on_phase_exit(bool pfn)
{
	struct kvmmmu_thread_stats *s = thread();
	__u64 ns;

	if (!s || !s->st.phase_ts)
		return 0;
	ns = bpf_ktime_get_ns() - s->st.phase_ts;
	s->st.phase_ts = 0;
	if (pfn)
		s->st.pfn_ns += ns;
	else
		s->st.walk_ns += ns;
	return 0;
}

/* FNAME(walk_addr_generic): shadow paging's walk of the guest's tables, per guest mode */
FUNC_PAIR(paging64_walk_addr_generic, on_phase_entry(), on_phase_exit(false))
FUNC_PAIR(paging32_walk_addr_generic, on_phase_entry(), on_phase_exit(false))
FUNC_PAIR(ept_walk_addr_generic, on_phase_entry(), on_phase_exit(false))
/*
 * The host page: kvm_faultin_pfn in 6.1 and 6.12 (a function of its own in
 * Debian's builds of both); kvm_mmu_faultin_pfn is the name later kernels
 * give it (not checked on one here). User space probes one of them.
 */
FUNC_PAIR(kvm_faultin_pfn, on_phase_entry(), on_phase_exit(true))
FUNC_PAIR(kvm_mmu_faultin_pfn, on_phase_entry(), on_phase_exit(true))

char LICENSE[] SEC("license") = "GPL";

#endif
