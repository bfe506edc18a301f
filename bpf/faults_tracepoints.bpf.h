/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracepoint model (func_mode == false): each fault rebuilt from
 * kvm_mmu_spte_requested and what follows it (kvm_mmu_set_spte: FIXED;
 * mark_mmio_spte: EMULATE; nothing before the next fault: SPURIOUS), the
 * guest walk it came from, the fast path's own tracepoint, and the
 * page-fault exits whose faults request no SPTE.
 */
#ifndef KVMMMU_FAULTS_TRACEPOINTS_BPF_H
#define KVMMMU_FAULTS_TRACEPOINTS_BPF_H

/* ---- tracepoints; each has a tp_btf and a raw_tp twin sharing one body ---- */

static __always_inline int on_walk(__u64 addr)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s)
		return 0;
	resolve_pending(s);
	s->counters[KVMMMU_GUEST_WALKS]++;
	/*
	 * A shadow-paging fault walks the address its exit reported (CR2, or
	 * an L2 GPA under nested EPT/NPT); a walk of another address before
	 * the exit's fault shows is the emulator's (an instruction fetch, a
	 * string I/O operand), which says nothing about that fault's path.
	 */
	if (s->st.exit_pending && (pf_exit_error_code_arg < 0 || addr == s->st.exit_addr))
		s->st.exit_walked = 1;
	/* the tracepoint model's faults start here; function probes' at kvm_mmu_page_fault */
	s->st.walk_ts = (func_mode ? s->st.timed : start_timing(s)) ? bpf_ktime_get_ns() : 0;
	s->st.walk_addr = addr;
	s->st.element_ts = 0;
	s->st.walked = 1;
	if (phases && !func_mode)
		phases_start(s);
	if (!func_mode)
		slow_start(s);
	return 0;
}
TP_PAIR(kvm_mmu_pagetable_walk, on_walk(addr), u64 addr, u32 pferr)

static __always_inline int on_paging_element(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (s && s->st.walk_ts)
		s->st.element_ts = bpf_ktime_get_ns();
	return 0;
}
TP_PAIR(kvm_mmu_paging_element, on_paging_element(), u64 pte, int level)

static __always_inline int on_walker_error(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s)
		return 0;
	s->counters[KVMMMU_WALKER_ERRORS]++;
	s->st.walked = 0; /* the guest gets a #PF: no SPTE follows this walk */
	return 0;
}
TP_PAIR(kvm_mmu_walker_error, on_walker_error(), u32 pferr)

/* The vCPU ioctl is KVM_PRE_FAULT_MEMORY, not KVM_RUN. */
static __always_inline bool pre_faulting(void)
{
	struct kvm_vcpu *vcpu;

	if (!kvm_has_wants_to_run())
		return false;
	vcpu = current_vcpu();
	return vcpu && !vcpu_wants_to_run(vcpu);
}

static __always_inline int on_spte_requested(struct kvm_page_fault *fault, bool btf)
{
	struct kvmmmu_thread_stats *s = thread();
	struct fault_levels l;
	struct fault_view f;
	struct kvm_vcpu *vcpu;

	if (!s || !armed)
		return 0;
	resolve_pending(s);
	s->counters[KVMMMU_SPTE_REQUESTED]++;
	if (btf) {
		read_fault_btf(fault, &f);
		read_levels_btf(fault, &l);
	} else {
		read_fault_raw(fault, &f);
		read_levels_raw(fault, &l);
	}
	if (s->st.walked && !walk_is_fault_s(&f, s->st.walk_addr))
		s->st.walked = 0;
	if (phases)
		phases_map_starts(s);
	s->st.prefetch = f.prefetch ? (pre_faulting() ? PREFETCH_PRE_FAULT : PREFETCH_ASYNC_PF) : 0;
	if (!f.prefetch) {
		s->st.access = f.access;
		count_request_level(s, &l);
		s->st.level_requested = l.goal;
		s->st.level_installed = 0;
		s->st.request_slot = l.has_slot;
		/* kvm_mmu_set_spte may not be attached: the handler's return reads the level */
		s->st.request_fault = (__u64)fault;
		s->st.fault_gfn = l.gfn;
		/* a slow record's access: count_fault() comes later, or never (done event) */
		s->st.last_access = f.access;
		if (region_shift)
			count_region(s, l.gfn << 12, l.slot_id);
	}
	if (!func_mode && !done_event && !f.prefetch)
		count_fault(s);
	s->st.exit_pending = 0; /* the exit's fault, shown */
	s->st.pending = 1;
	s->st.tdp_changes = 0;
	s->st.changed_level = 0;
	s->st.fault_write = f.write;
	s->st.tdp_mmu_fault = f.is_tdp && thread_vm_tdp_mmu(s);
	/*
	 * Here, not at the exit: a fault may come without one (VMX's EPT
	 * misconfiguration reaches kvm_mmu_page_fault() untraced)
	 */
	vcpu = (void *)s->st.exit_vcpu;
	if (!func_mode && !done_event && s->st.tdp_mmu_fault && vcpu)
		s->st.request_spurious = BPF_CORE_READ(vcpu, stat.pf_spurious);
	return 0;
}
TP_PAIR_TYPED(kvm_mmu_spte_requested, on_spte_requested(fault, true),
	      on_spte_requested(fault, false), struct kvm_page_fault *fault)

#define SPTE_WRITABLE (1ULL << 1) /* PT_WRITABLE_MASK, and VMX_EPT_WRITABLE_MASK too */

/* 6.2+: a pointer as a read-only typed one, loaded directly (fault-tolerant, no helper call). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
/* Set by user space when the kernel has bpf_rdonly_cast (its call is dead code otherwise). */
const volatile bool have_rdonly_cast = false;

/* A vmlinux struct of one unsigned long (x86-64): what an SPTE pointer is cast to. */
struct pgprot {
	unsigned long pgprot;
} __attribute__((preserve_access_index));

/*
 * Whether *SPTEP is writable (or unreadable: then the fault is not taken for
 * write-protected). A tp_btf program loads it directly where the kernel has
 * bpf_rdonly_cast; a raw_tp one (and 6.1) reads it by helper.
 */
static __always_inline bool spte_writable(u64 *sptep, bool btf)
{
	struct pgprot *p;
	u64 spte;

	if (btf && have_rdonly_cast) {
		p = bpf_rdonly_cast(sptep, bpf_core_type_id_kernel(struct pgprot));
		return p->pgprot & SPTE_WRITABLE;
	}
	return bpf_probe_read_kernel(&spte, sizeof(spte), sptep) || (spte & SPTE_WRITABLE);
}

/*
 * The SPTE of the request was set. Fixed, but: the TDP MMU traces this for a
 * spurious fault as well (its SPTE was already right: no change of it was
 * seen), and a write fault whose page had to stay read-only (write-tracked,
 * e.g. a shadowed guest page table) returns WRITE_PROTECTED (EMULATE before
 * 6.12), from either MMU.
 */
static __always_inline int on_set_spte(int level, gfn_t gfn, u64 *sptep, bool btf)
{
	struct kvmmmu_thread_stats *s = thread();
	int ret = ret_pf_fixed;
	__u64 now;

	if (!s)
		return 0;
	s->counters[KVMMMU_SPTES_SET]++;
	if (!s->st.pending) {
		/* FNAME(pte_prefetch) and direct_pte_prefetch map neighbours too */
		s->counters[KVMMMU_SPTES_PREFETCHED]++;
		return 0;
	}
	/*
	 * As KVM decides: write-protected overrides an unchanged SPTE
	 * (tdp_mmu_map_handle_target_level). Function probes return the
	 * outcome, and the done event carries it: neither guesses, and they
	 * attach no kvm_tdp_mmu_spte_changed to guess spurious from.
	 */
	if (!func_mode && s->st.fault_write && !spte_writable(sptep, btf))
		ret = ret_pf_write_protected;
	else if (!func_mode && !done_event && s->st.tdp_mmu_fault &&
		 (s->st.changed_level != (__u32)level || s->st.changed_gfn != gfn))
		ret = ret_pf_spurious;
	/*
	 * The level the fault's own SPTE was set at; not a prefetch request's
	 * (no fault), nor a spurious one's (the TDP MMU traces an SPTE it left as
	 * it was): where the fault's end has its outcome (on_handler_exit(),
	 * on_fault_done()), that end counts it
	 */
	if (!s->st.prefetch && ret != ret_pf_spurious) {
		if (!func_mode && !done_event)
			count_level(s, KVMMMU_LEVEL_INSTALLED_4K, level);
		s->st.level_installed = level;
		/* a huge SPTE's gfn is its first page's: the request's is the fault's own */
		if (s->st.fault_gfn == ~0ULL)
			s->st.fault_gfn = gfn;
	}
	now = s->st.walk_ts || s->st.map_ts ? bpf_ktime_get_ns() : 0;
	phases_map_ends(s, now);
	close_fault(s, ret, s->st.walk_ts ? now : 0);
	s->st.walked = 0;
	return 0;
}
TP_PAIR_TYPED(kvm_mmu_set_spte, on_set_spte(level, gfn, sptep, true),
	      on_set_spte(level, gfn, sptep, false), int level, gfn_t gfn, u64 *sptep)

static __always_inline int on_mark_mmio_spte(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s)
		return 0;
	s->counters[KVMMMU_MMIO_SPTES_CREATED]++;
	if (s->st.pending) {
		__u64 now = s->st.walk_ts || s->st.map_ts ? bpf_ktime_get_ns() : 0;

		phases_map_ends(s, now);
		close_fault(s, ret_pf_emulate, s->st.walk_ts ? now : 0);
		s->st.walked = 0;
	}
	return 0;
}
TP_PAIR(mark_mmio_spte, on_mark_mmio_spte(), u64 *sptep, gfn_t gfn, u64 spte)

static __always_inline int on_mmio_page_fault(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s)
		return 0;
	s->counters[KVMMMU_MMIO_FAULTS]++;
	s->st.exit_pending = 0; /* an MMIO SPTE's exit: emulated, not a fault KVM counts */
	return 0;
}
TP_PAIR(handle_mmio_page_fault, on_mmio_page_fault(), u64 addr, gfn_t gfn, unsigned access)

/*
 * A page table's SPTEs as handle_removed_pt() freezes them: REMOVED_SPTE
 * (6.1), FROZEN_SPTE (6.12: with SHADOW_NONPRESENT_VALUE, bit 63), whose
 * low bits 7.2 changed from 0x5a0 to 0x1a0 (neither is an SPTE the other
 * kernels make).
 */
#define SPTE_FROZEN 0x5a0ULL
#define SPTE_FROZEN_7 0x1a0ULL
#define SPTE_NONPRESENT_VALUE (1ULL << 63)

/*
 * A TDP MMU SPTE changed; the fault's own change is the one its
 * kvm_mmu_set_spte names. A huge leaf installed over a page table is
 * followed by the 512 children of that table, frozen one by one: those are
 * not the fault's SPTE, and would make it look spurious.
 */
static __always_inline int on_tdp_spte_changed(gfn_t gfn, int level, u64 new_spte)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s)
		return 0;
	s->counters[KVMMMU_TDP_SPTE_CHANGES]++;
	s->st.tdp_changes++;
	new_spte &= ~SPTE_NONPRESENT_VALUE;
	if (new_spte == SPTE_FROZEN || new_spte == SPTE_FROZEN_7)
		return 0;
	s->st.changed_gfn = gfn;
	s->st.changed_level = (__u32)level;
	return 0;
}
TP_PAIR(kvm_tdp_mmu_spte_changed, on_tdp_spte_changed(gfn, level, new_spte), int as_id, gfn_t gfn,
	int level, u64 old_spte, u64 new_spte)

/*
 * Function probes: a fault fixed on the fast path, timed from its start as
 * the slow path is (on_handler_exit()).
 */
static __always_inline void count_fast_fix(struct kvmmmu_thread_stats *s)
{
	s->counters[KVMMMU_PATH_FAST]++;
	if (s->st.fault_ts)
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_FAST], bpf_ktime_get_ns() - s->st.fault_ts);
}

/*
 * fast_page_fault() returns RET_PF_INVALID ("take the slow path"), FIXED or
 * SPURIOUS; only the last two end the fault (counted in pf_fast). Test for
 * those two: they are known wherever the values come from.
 */
static __always_inline int on_fast_page_fault(struct kvm_page_fault *fault, int ret, bool btf)
{
	struct kvmmmu_thread_stats *s = thread();
	struct fault_view f;

	if (!s || !armed)
		return 0;
	s->counters[KVMMMU_FAST_PF_CALLS]++;
	/* a direct MMU's fault: the last guest walk was the emulator's, not this fault's */
	s->st.walked = 0;
	/*
	 * function probes, by the handler's return where it tells
	 * (on_handler_exit()); the done event, always (on_fault_done())
	 */
	if (fast_at_return || done_event || (ret != ret_pf_fixed && ret != ret_pf_spurious))
		return 0;
	s->st.fast_resolved = 1;
	if (region_shift) {
		/* the fast path's fault has its GPA in ->addr (TDP: no guest walk) */
		if (btf)
			read_fault_btf(fault, &f);
		else
			read_fault_raw(fault, &f);
		count_region(s, f.addr, -1);
	}
	if (func_mode) {
		count_fast_fix(s);
	} else {
		s->counters[KVMMMU_PATH_FAST]++;
		if (btf)
			read_fault_btf(fault, &f);
		else
			read_fault_raw(fault, &f);
		s->st.access = f.access;
		count_fault(s);
		count_ret(s, ret, KVMMMU_FP_FAST);
		s->st.exit_pending = 0;
	}
	return 0;
}
TP_PAIR_TYPED(fast_page_fault, on_fast_page_fault(fault, ret, true),
	      on_fast_page_fault(fault, ret, false), struct kvm_vcpu *vcpu,
	      struct kvm_page_fault *fault, u64 *sptep, u64 old_spte, int ret)

/*
 * Tracepoint model, the faults no SPTE request shows. A page-fault exit
 * (kvm:kvm_page_fault: SVM's NPF and #PF intercepts, VMX's EPT violations)
 * is a fault KVM counts in pf_taken, unless it was an MMIO SPTE's
 * (handle_mmio_page_fault). One that ends before requesting an SPTE and
 * not on the fast path returned RET_PF_RETRY: it raced with an MMU-notifier
 * invalidation (is_page_fault_stale()), or its guest walk failed under
 * shadow paging (the guest gets the #PF), or it waits for an async page;
 * or RET_PF_EMULATE for a write to a write-tracked page, which the
 * emulation that follows shows (kvm:kvm_emulate_insn). It ends at the next
 * exit, or when KVM_RUN returns to user space (kvm:kvm_userspace_exit).
 * Backends that trace no page-fault exit (PVM) cannot show these faults.
 */
static __always_inline void resolve_exit(struct kvmmmu_thread_stats *s, int ret)
{
	if (!s->st.exit_pending || done_event)
		return;
	s->st.exit_pending = 0;
	count_fault(s); /* its access kind: the exit's error code */
	s->st.tdp_mmu_fault = !s->st.exit_walked && thread_vm_tdp_mmu(s);
	s->st.walked = s->st.exit_walked;
	s->st.walk_ts = 0; /* no walk-to-SPTE sample: there was no SPTE */
	s->st.tdp_changes = 0;
	close_fault(s, ret, 0);
	s->st.walked = 0;
}

/*
 * kvm:kvm_page_fault's address and error code, the arguments just before
 * and at pf_exit_error_code_arg, a load-time constant, so the verifier drops
 * the reads the running kernel cannot serve. False when neither is known.
 */
static __always_inline bool pf_exit_args(const u64 *ctx, u64 *addr, u64 *error_code)
{
	u64 a, ec;

	/*
	 * Loads with a fixed offset in each branch: written in C, clang folds
	 * them into ctx[index], a ctx access the verifier refuses.
	 */
	if (pf_exit_error_code_arg == 2) {
		asm volatile("%[a] = *(u64 *)(%[ctx] + 8)" : [a] "=r"(a) : [ctx] "r"(ctx));
		asm volatile("%[ec] = *(u64 *)(%[ctx] + 16)" : [ec] "=r"(ec) : [ctx] "r"(ctx));
	} else if (pf_exit_error_code_arg == 1) {
		asm volatile("%[a] = *(u64 *)(%[ctx] + 0)" : [a] "=r"(a) : [ctx] "r"(ctx));
		asm volatile("%[ec] = *(u64 *)(%[ctx] + 8)" : [ec] "=r"(ec) : [ctx] "r"(ctx));
	} else {
		return false;
	}
	*addr = a;
	*error_code = ec;
	return true;
}

static __always_inline int on_kvm_page_fault(const u64 *ctx)
{
	struct kvmmmu_thread_stats *s = thread();
	u64 addr = 0, error_code = 0;

	if (!s)
		return 0;
	s->counters[KVMMMU_PF_EXITS]++;
	if (func_mode || !armed)
		return 0;
	resolve_pending(s);
	resolve_exit(s, ret_pf_retry);
	s->st.walked = 0; /* a new exit: no earlier walk awaits its SPTE */
	/*
	 * An exit with the reserved-bit error code hit an MMIO SPTE:
	 * kvm_mmu_page_fault() gives it to handle_mmio_page_fault(), which
	 * emulates it (often from the vCPU's MMIO cache, with no event at all)
	 * or retries it; KVM counts neither in pf_taken. Only a stale MMIO SPTE
	 * becomes a fault, and that one requests an SPTE, which counts it.
	 */
	if (pf_exit_args(ctx, &addr, &error_code)) {
		s->st.exit_pending =
			!pf_exit_rsvd_is_mmio || !(error_code & KVMMMU_PFERR_RSVD_MASK);
		/* VMX traces an EPT violation's exit qualification, the others an error code */
		s->st.access = pf_exit_rsvd_is_mmio ? kvmmmu_access_from_pferr(error_code)
						    : kvmmmu_access_from_ept_qual(error_code);
	} else {
		s->st.exit_pending = 1;
		s->st.access = 0;
	}
	s->st.exit_addr = addr;
	s->st.exit_walked = 0;
	/* 6.1+ passes the vCPU first: its exit count tells this exit's emulation from a later one's
	 */
	s->st.exit_seq = pf_exit_error_code_arg == 2 ? vcpu_exits((struct kvm_vcpu *)ctx[0]) : 0;
	/* the thread's vCPU, for its pf_spurious at a TDP MMU request (resolve_pending()) */
	if (pf_exit_error_code_arg == 2)
		s->st.exit_vcpu = ctx[0];
	return 0;
}
/* Arguments differ across kernels (6.1 added vcpu). */
TP_PAIR_NO_ARGS(kvm_page_fault, on_kvm_page_fault(ctx))

/*
 * An emulation: the pending exit's fault returned RET_PF_EMULATE, if the
 * emulation is of that same exit. One of a later exit (an I/O string
 * instruction, an APIC access, a #UD: no page-fault exit came between to end
 * the fault) shows that the fault had ended before: RET_PF_RETRY.
 */
static __always_inline int on_emulate_insn(const u64 *ctx)
{
	struct kvmmmu_thread_stats *s;
	bool later;

	if (func_mode)
		return 0;
	s = thread();
	if (!s || !s->st.exit_pending)
		return 0;
	later = s->st.exit_seq && vcpu_exits((struct kvm_vcpu *)ctx[0]) != s->st.exit_seq;
	resolve_exit(s, later ? ret_pf_retry : ret_pf_emulate);
	return 0;
}
/* (vcpu, failed) in every kernel kvmmmu supports */
TP_PAIR_NO_ARGS(kvm_emulate_insn, on_emulate_insn(ctx))

/*
 * KVM_RUN returns to user space: the exit's fault ends, and so does any walk
 * (the emulator's, for an MMIO exit): the root reload that re-entry may wait
 * for, after a memslot change, is no fault's.
 */
static __always_inline int on_userspace_exit(void)
{
	struct kvmmmu_thread_stats *s;

	if (func_mode) /* the lock object tests in_fault there, not walks */
		return 0;
	s = thread();
	if (!s)
		return 0;
	/* no fault spans KVM_RUN's return: a request nothing resolved was spurious */
	resolve_pending(s);
	resolve_exit(s, ret_pf_retry);
	s->st.walked = 0;
	return 0;
}
TP_PAIR_NO_ARGS(kvm_userspace_exit, on_userspace_exit())

#endif
