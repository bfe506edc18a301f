// SPDX-License-Identifier: GPL-2.0
/*
 * Fault accounting: counts, RET_PF_* outcomes, paths and latencies of KVM MMU
 * faults, per thread (user space folds threads into vCPUs and VMs).
 *
 * Two sources, chosen by user space before load:
 *  - function probes (fentry/fexit, or kprobe/kretprobe) on kvm_mmu_page_fault,
 *    the page-fault handlers, direct_page_fault and kvm_vcpu_gfn_to_memslot
 *    give exact RET_PF_* values and handler times;
 *  - tracepoints alone (func_mode == false) reconstruct each fault from
 *    kvm_mmu_spte_requested and what follows it: kvm_mmu_set_spte means
 *    RET_PF_FIXED, mark_mmio_spte RET_PF_EMULATE, nothing before the next
 *    fault RET_PF_SPURIOUS (mmu_set_spte() finds the SPTE already right);
 *    where the backend traces its page-fault exits (kvm:kvm_page_fault), an
 *    exit whose fault never requested an SPTE was retried (see on_exit).
 * Every handler does one map lookup; nothing goes through a ring buffer.
 */
#include "kvmmmu_core.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "kvmmmu.h"
#include "kvmmmu_maps.bpf.h" /* before the helpers, which use its maps */
#include "kvmmmu.bpf.h"

/* Set by user space from the running kernel's BTF (RET_PF_* enum). */
const volatile int ret_pf_fixed = -1;
const volatile int ret_pf_spurious = -1;
const volatile int ret_pf_emulate = -1;
const volatile int ret_pf_retry = -1;
/* what a write fault that maps its page read-only returns: WRITE_PROTECTED (6.12+), else EMULATE */
const volatile int ret_pf_write_protected = -1;
/* kvm.tdp_mmu as the module has it (6.3+, where the VM keeps no copy): -1 unknown, 0, 1 */
const volatile int tdp_mmu_param = -1;
/* --sample N: 1 fault in N is timed (clock reads, histograms); every one is counted. */
const volatile __u32 sample_every = 1;
/*
 * Which raw argument of kvm:kvm_page_fault holds the error code: 2 where the
 * tracepoint passes the vCPU first (6.1+), 1 before; -1 unknown (no filter).
 */
const volatile int pf_exit_error_code_arg = -1;
/*
 * Whether kvm:kvm_page_fault's error code has PFERR_RSVD for an MMIO SPTE's
 * exit: SVM's NPF and every #PF intercept. VMX with EPT traces its EPT
 * violations' exit qualification there, whose bit 3 is "readable"; its MMIO
 * SPTEs exit as EPT misconfigurations, which trace no kvm_page_fault.
 */
const volatile bool pf_exit_rsvd_is_mmio = true;
/* Handlers' RET_PF_* come from function probes, not from the tracepoint model. */
const volatile bool func_mode = false;
/*
 * kvmmmu:kvm_mmu_page_fault_done is attached (kernel-patches/): it ends every
 * fault KVM counts, with its outcome, and the tracepoint model only says
 * which path the fault took.
 */
const volatile bool done_event = false;
/*
 * Set by user space once every program is attached. Programs attach one by
 * one; a fault whose request was seen before its SPTE's program was there
 * would look spurious. Until then no fault starts.
 */
bool armed = false;

KVMMMU_BLANK_THREAD(blank_thread, struct kvmmmu_thread_stats);

/*
 * Puts the mmu_lock of the thread's VM into the lock table (a vCPU's first
 * events), for the mmu_lock object's contention_begin. Not atomic: another
 * VM may take the same free slot at once, so the thread counts as known only
 * once a later event finds its lock there. A full set sets t->full, which
 * makes contention_begin check every rwlock the slow way.
 */
static __always_inline void learn_mmu_lock(struct kvmmmu_thread_stats *s)
{
	__u32 zero = 0, base, tgid = bpf_get_current_pid_tgid() >> 32;
	struct kvmmmu_lock_table *t;
	struct kvm_vcpu *vcpu;
	__u64 lock;

	vcpu = current_vcpu();
	t = bpf_map_lookup_elem(&mmu_locks, &zero);
	if (!vcpu || !t)
		return;
	lock = (__u64)BPF_CORE_READ(vcpu, kvm) + bpf_core_field_offset(struct kvm, mmu_lock);
	if (lock_slot(t, lock)) {
		s->st.lock_known = 1;
		return;
	}
	base = lock_set_base(lock);
	for (int i = 0; i < KVMMMU_LOCK_WAYS; i++) {
		struct kvmmmu_lock_slot *slot = &t->slots[(base + i) & (KVMMMU_LOCK_SLOTS - 1)];

		if (!slot->lock) {
			slot->tgid = tgid;
			slot->lock = lock;
			return;
		}
	}
	t->full = 1;
}

/* The calling thread's entry, created on its first event; NULL when not traced. */
static __always_inline struct kvmmmu_thread_stats *thread(void)
{
	struct kvmmmu_thread_stats *s =
		thread_entry(&thread_stats, &blank_thread, filter_pids ? &traced_pids : NULL,
			     &thread_news, false, &health);

	if (s && !s->st.lock_known)
		learn_mmu_lock(s);
	return s;
}

/*
 * Prefetch "faults" KVM does not count in pf_taken: an async page fault's
 * completion (kvm_arch_async_page_ready(), which counts its fix in
 * pf_fixed), and 6.10+'s KVM_PRE_FAULT_MEMORY (which counts nothing).
 */
enum { PREFETCH_ASYNC_PF = 1, PREFETCH_PRE_FAULT = 2 };

/* A counted fault's outcome RET, on PATH. */
static __always_inline void count_ret(struct kvmmmu_thread_stats *s, int ret,
				      enum kvmmmu_fault_path path)
{
	__u32 slot = ret < 0 ? KVMMMU_RET_PF_ERROR : (__u32)ret;

	if (slot >= KVMMMU_RET_PF_ERROR && ret >= 0) {
		__sync_fetch_and_add(&health.bad_ret, 1);
		return;
	}
	/*
	 * The mask restates the bound for the verifier; the barrier keeps the
	 * compiler from dropping it as redundant and indexing with the
	 * sign-extended ret, which 6.1's verifier rejects as unbounded.
	 */
	barrier_var(slot);
	s->ret_pf[slot & (KVMMMU_RET_PF_SLOTS - 1)]++;
	s->outcomes[path & (KVMMMU_N_FAULT_PATHS - 1)][slot & (KVMMMU_RET_PF_SLOTS - 1)]++;
}

/* A prefetch's outcome RET: in ret_pf[] (KVM's pf_fixed), in no path. */
static __always_inline void count_ret_only(struct kvmmmu_thread_stats *s, int ret)
{
	__u32 slot = (__u32)ret;

	if (slot < KVMMMU_RET_PF_ERROR)
		s->ret_pf[slot]++;
}

/*
 * Whether the fault starting now is timed: every one by default, each with
 * probability 1/sample_every with --sample. At random, not every Nth start:
 * starts that are no fault KVM counts (MMIO exits, the emulator's walks) and
 * a guest's regular access pattern would skew a fixed stride, and a random
 * choice times 1 in N of the counted faults whatever else starts timing.
 * Untimed faults read no clock: that is what sampling saves.
 */
static __always_inline bool start_timing(struct kvmmmu_thread_stats *s)
{
	if (sample_every <= 1)
		return s->st.timed = 1;
	return s->st.timed = bpf_get_prandom_u32() % sample_every == 0;
}

/* Ends the pending fault with RET; NOW is when its SPTE was set, 0 if none was (no latency). */
static __always_inline void close_fault(struct kvmmmu_thread_stats *s, int ret, __u64 now)
{
	enum kvmmmu_fault_path path;

	s->st.pending = 0;
	if (func_mode)
		return;
	if (s->st.prefetch) {
		/* no fault KVM takes: an async-PF completion's fix alone counts, in pf_fixed */
		if (s->st.prefetch == PREFETCH_ASYNC_PF && ret == ret_pf_fixed && !done_event)
			count_ret_only(s, ret);
		s->st.prefetch = 0;
		return;
	}
	path = kvmmmu_model_path(&s->st);
	if (done_event) {
		s->st.closed_path = path + 1; /* kvm_mmu_page_fault_done counts it */
	} else if (path == KVMMMU_FP_TDP_MMU) {
		s->counters[KVMMMU_PATH_TDP_MMU]++;
		count_ret(s, ret, KVMMMU_FP_TDP_MMU);
	} else if (path == KVMMMU_FP_SHADOW) {
		s->counters[KVMMMU_PATH_SHADOW]++;
		count_ret(s, ret, KVMMMU_FP_SHADOW);
	} else {
		s->counters[KVMMMU_PATH_DIRECT]++;
		count_ret(s, ret, KVMMMU_FP_DIRECT);
	}
	if (now && s->st.walked && s->st.walk_ts)
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_WALK_TO_SPTE], now - s->st.walk_ts);
}

/*
 * Tracepoint model: a request that nothing resolved. The shadow MMU and the
 * legacy direct MMU found the SPTE already right (mmu_set_spte() traces
 * nothing then): spurious. The TDP MMU traces its spurious faults, so there
 * nothing means it lost a cmpxchg, or met a frozen SPTE: RET_PF_RETRY.
 */
static __always_inline void resolve_pending(struct kvmmmu_thread_stats *s)
{
	if (!s->st.pending)
		return;
	close_fault(s, kvmmmu_unset_request_is_retry(&s->st) ? ret_pf_retry : ret_pf_spurious, 0);
	s->st.walked = 0;
}

/*
 * Before 6.3, direct_page_fault() also handled the TDP MMU's faults: it chose
 * kvm_tdp_mmu_map() by the VM's tdp_mmu_enabled, a snapshot of the module
 * parameter that 6.3 removed when it split out kvm_tdp_mmu_page_fault().
 * The "___pre_6_3" flavours match struct kvm_arch and struct kvm where the
 * member exists; elsewhere bpf_core_field_exists() is false.
 */
struct kvm_arch___pre_6_3 {
	bool tdp_mmu_enabled;
} __attribute__((preserve_access_index));

struct kvm___pre_6_3 {
	struct kvm_arch___pre_6_3 arch;
} __attribute__((preserve_access_index));

static __always_inline bool vm_tdp_mmu_enabled(struct kvm_vcpu *vcpu)
{
	struct kvm___pre_6_3 *kvm = (void *)BPF_CORE_READ(vcpu, kvm);

	if (!bpf_core_field_exists(kvm->arch.tdp_mmu_enabled))
		return false;
	return BPF_CORE_READ(kvm, arch.tdp_mmu_enabled);
}

/*
 * Whether the thread's VM uses the TDP MMU, found once per thread: before
 * 6.3 from its struct kvm, since then from the module parameter (read-only
 * while KVM is loaded, so the same for every VM).
 */
static __always_inline bool thread_vm_tdp_mmu(struct kvmmmu_thread_stats *s)
{
	struct kvm___pre_6_3 *probe = NULL;
	struct kvm_vcpu *vcpu;

	if (!s->st.vm_mmu) {
		if (bpf_core_field_exists(probe->arch.tdp_mmu_enabled)) {
			vcpu = current_vcpu();
			if (!vcpu)
				return false; /* not known yet: ask again */
			s->st.vm_mmu = vm_tdp_mmu_enabled(vcpu) ? 2 : 1;
		} else {
			s->st.vm_mmu = tdp_mmu_param == 1 ? 2 : 1;
		}
	}
	return s->st.vm_mmu == 2;
}

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

/* What the tracepoint model reads of a struct kvm_page_fault. */
struct fault_view {
	__u64 addr;
	bool write;
	bool is_tdp;
	bool prefetch;
};

#define FAULT_SPAN 32 /* bytes from ->addr that hold ->write and ->is_tdp (16 on 5.16..6.12) */

/*
 * The fields of a tp_btf program's FAULT, a typed pointer: direct loads (the
 * verifier turns them into fault-tolerant loads), not bpf_probe_read_kernel(),
 * which costs about as much as a map lookup. CO-RE relocates each offset.
 */
static __always_inline void read_fault_btf(struct kvm_page_fault *fault, struct fault_view *v)
{
	/*
	 * 6.12 marks every tp_btf pointer argument maybe-NULL (trusted_ptr_or_null)
	 * and refuses a load without this test; a NULL fault reads as the raw_tp
	 * twin's does.
	 */
	if (!fault) {
		v->addr = 0;
		v->write = v->is_tdp = v->prefetch = false;
		return;
	}
	v->addr = fault->addr;
	v->write = fault->write;
	v->is_tdp = bpf_core_field_exists(fault->is_tdp) ? fault->is_tdp : false;
	v->prefetch = fault->prefetch;
}

/*
 * A raw_tp program's FAULT is a plain number: one read of the fault's first
 * bytes, not one per field. The offsets are CO-RE relocated constants; a
 * layout that puts a field beyond the span reads it on its own.
 */
static __always_inline void read_fault_raw(struct kvm_page_fault *fault, struct fault_view *v)
{
	__u32 base = bpf_core_field_offset(fault->addr);
	__u32 w = bpf_core_field_offset(fault->write) - base;
	__u32 pf = bpf_core_field_offset(fault->prefetch) - base;
	__u32 t = bpf_core_field_exists(fault->is_tdp) ? bpf_core_field_offset(fault->is_tdp) - base
						       : 0;
	__u8 buf[FAULT_SPAN] = {};

	v->addr = 0;
	v->write = v->is_tdp = v->prefetch = false;
	if (!fault || bpf_probe_read_kernel(buf, sizeof(buf), (void *)fault + base))
		return;
	v->addr = *(__u64 *)buf;
	if (w < FAULT_SPAN)
		v->write = buf[w & (FAULT_SPAN - 1)];
	else
		v->write = BPF_CORE_READ(fault, write);
	if (pf < FAULT_SPAN)
		v->prefetch = buf[pf & (FAULT_SPAN - 1)];
	else
		v->prefetch = BPF_CORE_READ(fault, prefetch);
	if (!bpf_core_field_exists(fault->is_tdp))
		return;
	if (t < FAULT_SPAN)
		v->is_tdp = buf[t & (FAULT_SPAN - 1)];
	else
		v->is_tdp = BPF_CORE_READ(fault, is_tdp);
}

/*
 * Whether the last guest walk was this fault's own: shadow paging
 * (FNAME(page_fault)) walks FAULT->addr just before it requests the SPTE;
 * a TDP fault walks nothing, and the walk before it was the emulator's.
 */
static __always_inline bool walk_is_fault_s(const struct fault_view *f, __u64 walk_addr)
{
	return !f->is_tdp && f->addr == walk_addr;
}
TP_PAIR(kvm_mmu_walker_error, on_walker_error(), u32 pferr)

struct kvm_vcpu___wants_to_run {
	bool wants_to_run;
} __attribute__((preserve_access_index));

/* The vCPU ioctl is KVM_PRE_FAULT_MEMORY, not KVM_RUN (whose vcpu->wants_to_run is set). */
static __always_inline bool pre_faulting(void)
{
	struct kvm_vcpu___wants_to_run *vcpu = NULL;

	if (!bpf_core_field_exists(vcpu->wants_to_run))
		return false; /* before 6.10: no KVM_PRE_FAULT_MEMORY */
	vcpu = (void *)current_vcpu();
	return vcpu && !BPF_CORE_READ(vcpu, wants_to_run);
}

static __always_inline int on_spte_requested(struct kvm_page_fault *fault, bool btf)
{
	struct kvmmmu_thread_stats *s = thread();
	struct fault_view f;

	if (!s || !armed)
		return 0;
	resolve_pending(s);
	s->counters[KVMMMU_SPTE_REQUESTED]++;
	if (btf)
		read_fault_btf(fault, &f);
	else
		read_fault_raw(fault, &f);
	if (s->st.walked && !walk_is_fault_s(&f, s->st.walk_addr))
		s->st.walked = 0;
	if (s->st.walked && s->st.element_ts > s->st.walk_ts)
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_WALK], s->st.element_ts - s->st.walk_ts);
	s->st.prefetch = f.prefetch ? (pre_faulting() ? PREFETCH_PRE_FAULT : PREFETCH_ASYNC_PF) : 0;
	if (!func_mode && !done_event && !f.prefetch)
		s->counters[KVMMMU_FAULTS]++;
	s->st.exit_pending = 0; /* the exit's fault, shown */
	s->st.pending = 1;
	s->st.tdp_changes = 0;
	s->st.changed_level = 0;
	s->st.fault_write = f.write;
	s->st.tdp_mmu_fault = f.is_tdp && thread_vm_tdp_mmu(s);
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

	if (!s)
		return 0;
	s->counters[KVMMMU_SPTES_SET]++;
	if (!s->st.pending) {
		/* FNAME(pte_prefetch) and direct_pte_prefetch map neighbours too */
		s->counters[KVMMMU_SPTES_PREFETCHED]++;
		return 0;
	}
	/* as KVM decides: write-protected overrides an unchanged SPTE
	 * (tdp_mmu_map_handle_target_level) */
	if (s->st.fault_write && !spte_writable(sptep, btf))
		ret = ret_pf_write_protected;
	else if (s->st.tdp_mmu_fault &&
		 (s->st.changed_level != (__u32)level || s->st.changed_gfn != gfn))
		ret = ret_pf_spurious;
	close_fault(s, ret, s->st.walk_ts ? bpf_ktime_get_ns() : 0);
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
		close_fault(s, ret_pf_emulate, s->st.walk_ts ? bpf_ktime_get_ns() : 0);
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
 * (6.1), FROZEN_SPTE (6.12: with SHADOW_NONPRESENT_VALUE, bit 63).
 */
#define SPTE_FROZEN 0x5a0ULL
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
	if ((new_spte & ~SPTE_NONPRESENT_VALUE) == SPTE_FROZEN)
		return 0;
	s->st.changed_gfn = gfn;
	s->st.changed_level = (__u32)level;
	return 0;
}
TP_PAIR(kvm_tdp_mmu_spte_changed, on_tdp_spte_changed(gfn, level, new_spte), int as_id, gfn_t gfn,
	int level, u64 old_spte, u64 new_spte)

/*
 * fast_page_fault() returns RET_PF_INVALID ("take the slow path"), FIXED or
 * SPURIOUS; only the last two end the fault (counted in pf_fast). Test for
 * those two: they are known wherever the values come from.
 */
static __always_inline int on_fast_page_fault(int ret)
{
	struct kvmmmu_thread_stats *s = thread();
	__u64 now;

	if (!s || !armed)
		return 0;
	s->counters[KVMMMU_FAST_PF_CALLS]++;
	/* a direct MMU's fault: the last guest walk was the emulator's, not this fault's */
	s->st.walked = 0;
	if (ret != ret_pf_fixed && ret != ret_pf_spurious)
		return 0;
	s->st.fast_resolved = 1;
	if (done_event)
		return 0; /* kvm_mmu_page_fault_done counts it */
	s->counters[KVMMMU_PATH_FAST]++;
	if (s->st.handler_ts) {
		now = bpf_ktime_get_ns();
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_FAST], now - s->st.handler_ts);
	}
	if (!func_mode) {
		s->counters[KVMMMU_FAULTS]++;
		count_ret(s, ret, KVMMMU_FP_FAST);
		s->st.exit_pending = 0;
	}
	return 0;
}
TP_PAIR(fast_page_fault, on_fast_page_fault(ret), struct kvm_vcpu *vcpu,
	struct kvm_page_fault *fault, u64 *sptep, u64 old_spte, int ret)

/*
 * kvmmmu:kvm_mmu_page_fault_done (kernel-patches/: not in any kernel yet):
 * one event per fault KVM counts, with the outcome pf_fixed/pf_spurious/
 * pf_emulate count. The path is the tracepoint model's: the fast path if it
 * resolved the fault, else the MMU its SPTE request (or its exit, with no
 * request) named. START_NS is when kvm_mmu_do_page_fault() was called, 0 if
 * the event was enabled during the fault.
 */
static __always_inline int on_fault_done(int ret, __u64 start_ns)
{
	struct kvmmmu_thread_stats *s = thread();
	enum kvmmmu_fault_path path;

	if (!s || !armed)
		return 0;
	if (s->st.fast_resolved)
		path = KVMMMU_FP_FAST;
	else if (s->st.closed_path)
		path = (s->st.closed_path - 1) & (KVMMMU_N_FAULT_PATHS - 1);
	else if (s->st.pending)
		path = kvmmmu_model_path(&s->st);
	else if (s->st.exit_walked)
		path = KVMMMU_FP_SHADOW;
	else
		path = thread_vm_tdp_mmu(s) ? KVMMMU_FP_TDP_MMU : KVMMMU_FP_DIRECT;
	s->counters[KVMMMU_FAULTS]++;
	s->counters[KVMMMU_PATH_FAST + path]++;
	count_ret(s, ret, path);
	/*
	 * The event carries the fault's start: --sample decides here, once per
	 * fault KVM counts (a TDP fault shows no walk, where the tracepoint
	 * model decides).
	 */
	if (start_ns && start_timing(s))
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_FAULT], bpf_ktime_get_ns() - start_ns);
	/* this fault is over: nothing of it may end the next one */
	s->st.fast_resolved = 0;
	s->st.closed_path = 0;
	s->st.pending = 0;
	s->st.exit_pending = 0;
	s->st.exit_walked = 0;
	s->st.walked = 0;
	s->st.tdp_changes = 0;
	return 0;
}
TP_PAIR(kvm_mmu_page_fault_done, on_fault_done(ret, start_ns), struct kvm_vcpu *vcpu,
	gpa_t cr2_or_gpa, u64 error_code, int ret, u64 start_ns)

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
	s->counters[KVMMMU_FAULTS]++;
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
	if (pf_exit_args(ctx, &addr, &error_code))
		s->st.exit_pending =
			!pf_exit_rsvd_is_mmio || !(error_code & KVMMMU_PFERR_RSVD_MASK);
	else
		s->st.exit_pending = 1;
	s->st.exit_addr = addr;
	s->st.exit_walked = 0;
	/* 6.1+ passes the vCPU first: its exit count tells this exit's emulation from a later one's
	 */
	s->st.exit_seq = pf_exit_error_code_arg == 2 ? vcpu_exits((struct kvm_vcpu *)ctx[0]) : 0;
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

/*
 * A thread of a process with map entries exits: tell user space, which keeps
 * its last figures and frees its entries in every per-thread map, so that
 * VM churn over a long run never fills them. GROUP_DEAD: the process is gone.
 */
static __always_inline int on_thread_exit(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct kvmmmu_thread_key key = {.tgid = id >> 32, .tid = (__u32)id};
	struct task_struct *task = (void *)bpf_get_current_task();
	struct kvmmmu_thread_news *ev;

	if (!bpf_map_lookup_elem(&seen_procs, &key.tgid))
		return 0;
	ev = bpf_ringbuf_reserve(&thread_news, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&health.news_lost, 1);
		return 0;
	}
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->key = key;
	ev->kind = KVMMMU_THREAD_EXIT;
	/* do_exit() counts the thread out of signal->live before this tracepoint */
	ev->group_dead = BPF_CORE_READ(task, signal, live.counter) == 0;
	bpf_ringbuf_submit(ev, 0);
	return 0;
}
/* Arguments differ across kernels (6.13 added group_dead). */
TP_PAIR_NO_ARGS(sched_process_exit, on_thread_exit())

/* kvmmmu-hist -- COMMAND: the command's descendants are traced too. */
const volatile bool follow_forks = false;

/*
 * A traced process forks: the child is traced from its first instruction,
 * so that `sudo qemu ...`, `timeout 60 qemu ...` or a wrapper script that
 * does not exec count their VMM's faults. A new thread is already in.
 * Attached only with follow_forks: it fires for every fork of the host.
 */
static __always_inline int on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u8 one = 1;

	if (!follow_forks)
		return 0;
	ptgid = BPF_CORE_READ(parent, tgid);
	ctgid = BPF_CORE_READ(child, tgid);
	if (ptgid == ctgid || !bpf_map_lookup_elem(&traced_pids, &ptgid))
		return 0;
	if (bpf_map_update_elem(&traced_pids, &ctgid, &one, BPF_ANY))
		__sync_fetch_and_add(&health.pids_full, 1);
	return 0;
}
TP_PAIR(sched_process_fork, on_fork(parent, child), struct task_struct *parent,
	struct task_struct *child)

/* ---- function probes: fentry/fexit and kprobe/kretprobe twins ---- */

static __always_inline int on_fault_entry(void)
{
	struct kvmmmu_thread_stats *s = thread();

	if (!s || !armed)
		return 0;
	/*
	 * The previous fault never returned as far as we saw: its fexit was
	 * skipped (the kernel skips the fexit programs of calls in flight when
	 * another program's attach or detach replaces the function's trampoline)
	 * or its kretprobe missed. Nothing nests here: say so, do not guess.
	 */
	if (s->st.in_fault)
		__sync_fetch_and_add(&health.exits_lost, 1);
	s->st.fault_ts = start_timing(s) ? bpf_ktime_get_ns() : 0;
	s->st.in_fault = 1;
	s->st.handled = 0;
	s->st.pre_lookups = 0;
	s->st.fast_resolved = 0;
	s->st.direct = 0;
	return 0;
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
	if (s->st.fault_ts && s->st.handled)
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_FAULT], bpf_ktime_get_ns() - s->st.fault_ts);
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
	s->st.handler_ts = s->st.timed ? bpf_ktime_get_ns() : 0;
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
 * The handler kvm_mmu_do_page_fault() called ends the fault: its return
 * value is the RET_PF_* outcome. Each of the five (kvm_tdp_page_fault, the
 * shadow MMU's paging64/paging32/ept_page_fault, nonpaging_page_fault) is
 * probed, so every fault is counted once whichever takes it. Faults outside
 * kvm_mmu_page_fault (prefetch, async-PF completion, KVM_PRE_FAULT_MEMORY)
 * are not counted, as KVM's pf_taken does not count them.
 */
static __always_inline int on_handler_exit(long ret, enum handler_kind kind)
{
	struct kvmmmu_thread_stats *s = thread();
	__u64 now;

	if (!s || !s->st.in_handler)
		return 0;
	if (s->st.in_fault) {
		s->st.handled = 1;
		s->counters[KVMMMU_FAULTS]++;
		if (s->st.fast_resolved) {
			count_ret(s, (int)ret, KVMMMU_FP_FAST);
		} else {
			if (s->st.handler_ts) {
				now = bpf_ktime_get_ns();
				kvmmmu_hist_add(&s->hist[KVMMMU_HIST_SLOW], now - s->st.handler_ts);
			}
			if (kind == HANDLER_SHADOW) {
				s->counters[KVMMMU_PATH_SHADOW]++;
				count_ret(s, (int)ret, KVMMMU_FP_SHADOW);
			} else if (kind == HANDLER_NONPAGING || s->st.direct ||
				   (!direct_probed && !thread_vm_tdp_mmu(s))) {
				s->counters[KVMMMU_PATH_DIRECT]++;
				count_ret(s, (int)ret, KVMMMU_FP_DIRECT);
			} else {
				s->counters[KVMMMU_PATH_TDP_MMU]++;
				count_ret(s, (int)ret, KVMMMU_FP_TDP_MMU);
			}
		}
	}
	s->st.handler_ts = 0;
	s->st.in_handler = 0;
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

SEC("fentry/kvm_mmu_page_fault")
int BPF_PROG(kvm_mmu_page_fault_fentry)
{
	return on_fault_entry();
}
SEC("fexit/kvm_mmu_page_fault")
int BPF_PROG(kvm_mmu_page_fault_fexit)
{
	return on_fault_exit();
}
SEC("kprobe/kvm_mmu_page_fault")
int BPF_KPROBE(kvm_mmu_page_fault_kprobe)
{
	return on_fault_entry();
}
SEC("kretprobe/kvm_mmu_page_fault")
int BPF_KRETPROBE(kvm_mmu_page_fault_kretprobe)
{
	return on_fault_exit();
}

/* A page-fault handler's four probes: fentry/fexit and kprobe/kretprobe. */
#define HANDLER_PROBES(func, kind)                                                                 \
	SEC("fentry/" #func)                                                                       \
	int BPF_PROG(func##_fentry)                                                                \
	{                                                                                          \
		return on_handler_entry();                                                         \
	}                                                                                          \
	SEC("fexit/" #func)                                                                        \
	int BPF_PROG(func##_fexit, struct kvm_vcpu *vcpu, struct kvm_page_fault *fault, int ret)   \
	{                                                                                          \
		return on_handler_exit(ret, kind);                                                 \
	}                                                                                          \
	SEC("kprobe/" #func)                                                                       \
	int BPF_KPROBE(func##_kprobe)                                                              \
	{                                                                                          \
		return on_handler_entry();                                                         \
	}                                                                                          \
	SEC("kretprobe/" #func)                                                                    \
	int BPF_KRETPROBE(func##_kretprobe, int ret)                                               \
	{                                                                                          \
		return on_handler_exit(ret, kind);                                                 \
	}

HANDLER_PROBES(kvm_tdp_page_fault, HANDLER_TDP)
HANDLER_PROBES(paging64_page_fault, HANDLER_SHADOW)
HANDLER_PROBES(paging32_page_fault, HANDLER_SHADOW)
HANDLER_PROBES(ept_page_fault, HANDLER_SHADOW)
HANDLER_PROBES(nonpaging_page_fault, HANDLER_NONPAGING)

SEC("fentry/direct_page_fault")
int BPF_PROG(direct_page_fault_fentry, struct kvm_vcpu *vcpu)
{
	return on_direct_entry(vcpu);
}
SEC("kprobe/direct_page_fault")
int BPF_KPROBE(direct_page_fault_kprobe, struct kvm_vcpu *vcpu)
{
	return on_direct_entry(vcpu);
}

SEC("fentry/kvm_vcpu_gfn_to_memslot")
int BPF_PROG(kvm_vcpu_gfn_to_memslot_fentry)
{
	return on_memslot_entry();
}
SEC("fexit/kvm_vcpu_gfn_to_memslot")
int BPF_PROG(kvm_vcpu_gfn_to_memslot_fexit)
{
	return on_memslot_exit();
}
SEC("kprobe/kvm_vcpu_gfn_to_memslot")
int BPF_KPROBE(kvm_vcpu_gfn_to_memslot_kprobe)
{
	return on_memslot_entry();
}
SEC("kretprobe/kvm_vcpu_gfn_to_memslot")
int BPF_KRETPROBE(kvm_vcpu_gfn_to_memslot_kretprobe)
{
	return on_memslot_exit();
}

char LICENSE[] SEC("license") = "GPL";
