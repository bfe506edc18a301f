/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tracepoint model and the fault's end read of a struct
 * kvm_page_fault (by BTF, or raw where the kernel has none): its address,
 * access kind and flags, and its levels (requested, why not huge), and how
 * those levels are counted.
 */
#ifndef KVMMMU_FAULTS_VIEW_BPF_H
#define KVMMMU_FAULTS_VIEW_BPF_H

/* What the tracepoint model reads of a struct kvm_page_fault. */
struct fault_view {
	__u64 addr;
	__u32 access; /* KVMMMU_ACC_* */
	bool write;
	bool is_tdp;
	bool prefetch;
};

#define FAULT_SPAN 32 /* bytes from ->addr that hold the flags read (16 on 5.16..6.12) */
_Static_assert(KVMMMU_POWER_OF_TWO(FAULT_SPAN), "fault bytes are indexed & (FAULT_SPAN - 1)");

/* As kvmmmu_access_from_pferr(): RSVD without P (a stale MMIO SPTE on VMX) is not known. */
static __always_inline __u32 fault_access(bool write, bool exec, bool present, bool rsvd)
{
	if (rsvd && !present)
		return 0;
	return KVMMMU_ACC_KNOWN | (write ? KVMMMU_ACC_WRITE : 0) | (exec ? KVMMMU_ACC_FETCH : 0) |
	       (present ? KVMMMU_ACC_PRESENT : 0);
}

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
		v->access = 0;
		v->write = v->is_tdp = v->prefetch = false;
		return;
	}
	v->addr = fault->addr;
	v->write = fault->write;
	v->is_tdp = fault_has_is_tdp() ? fault->is_tdp : false;
	v->prefetch = fault->prefetch;
	v->access = fault_access(v->write, fault->exec, fault->present, fault->rsvd);
}

/* FAULT's bool FIELD, at OFF from ->addr: from BUF (its first bytes) when there, else on its own.
 */
#define FAULT_FLAG(buf, off, fault, field)                                                         \
	((off) < FAULT_SPAN ? (bool)(buf)[(off) & (FAULT_SPAN - 1)] : BPF_CORE_READ(fault, field))

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
	__u32 x = bpf_core_field_offset(fault->exec) - base;
	__u32 p = bpf_core_field_offset(fault->present) - base;
	__u32 r = bpf_core_field_offset(fault->rsvd) - base;
	__u32 t = fault_has_is_tdp() ? bpf_core_field_offset(fault->is_tdp) - base : 0;
	__u8 buf[FAULT_SPAN] = {};

	v->addr = 0;
	v->access = 0;
	v->write = v->is_tdp = v->prefetch = false;
	if (!fault || bpf_probe_read_kernel(buf, sizeof(buf), (void *)fault + base))
		return;
	v->addr = *(__u64 *)buf;
	v->write = FAULT_FLAG(buf, w, fault, write);
	v->prefetch = FAULT_FLAG(buf, pf, fault, prefetch);
	v->access =
		fault_access(v->write, FAULT_FLAG(buf, x, fault, exec),
			     FAULT_FLAG(buf, p, fault, present), FAULT_FLAG(buf, r, fault, rsvd));
	if (fault_has_is_tdp())
		v->is_tdp = FAULT_FLAG(buf, t, fault, is_tdp);
}

/* What a request says of its mapping level, kvm_mmu_hugepage_adjust() having run. */
struct fault_levels {
	__u8 max, req, goal; /* PG_LEVEL_*: what the guest's mapping allows, the host, the goal */
	bool nx_disallowed;  /* fault->huge_page_disallowed: NX huge pages */
	bool has_slot;	     /* a memslot backs the address (else MMIO: no level decided) */
	bool slot_dirty;     /* the memslot is dirty-logged */
	bool gmem;	     /* guest_memfd gives the page: a private fault, a gmem-only memslot */
	gfn_t gfn;	     /* the guest frame the fault maps */
	int slot_id;	     /* its memslot's id, -1: none */
};

#define PG_LEVEL_4K 1
#define PG_LEVEL_2M 2
#define PG_LEVEL_1G 3

/* LEVEL in the counter of that level after FIRST (its 4 KiB one); constant indices, as the
 * verifier wants them. */
static __always_inline void count_level(struct kvmmmu_thread_stats *s, int first, int level)
{
	if (level == PG_LEVEL_4K)
		s->counters[first]++;
	else if (level == PG_LEVEL_2M)
		s->counters[first + 1]++;
	else if (level == PG_LEVEL_1G)
		s->counters[first + 2]++;
}

/*
 * Where a fault's end has its outcome RET (the handler's return, the done
 * event): the level its SPTE was set at (on_set_spte()), unless it was
 * spurious, the TDP MMU tracing an SPTE it left as it was.
 */
static __always_inline void count_installed_level(struct kvmmmu_thread_stats *s, int ret)
{
	if (ret == ret_pf_spurious)
		s->st.level_installed = 0;
	else
		count_level(s, KVMMMU_LEVEL_INSTALLED_4K, s->st.level_installed);
}

static __always_inline void read_levels_btf(struct kvm_page_fault *fault, struct fault_levels *l)
{
	struct kvm_memory_slot *slot;

	__builtin_memset(l, 0, sizeof(*l));
	if (!fault) /* as in read_fault_btf() */
		return;
	l->max = fault->max_level;
	l->req = fault->req_level;
	l->goal = fault->goal_level;
	l->nx_disallowed = fault->huge_page_disallowed;
	slot = fault->slot;
	l->has_slot = slot != NULL;
	l->slot_dirty = slot && (slot->flags & KVMMMU_MEM_LOG_DIRTY_PAGES);
	l->gmem = (fault_has_is_private() &&
		   ((struct kvm_page_fault___private *)fault)->is_private) ||
		  (slot && (slot->flags & KVMMMU_MEMSLOT_GMEM_ONLY));
	l->gfn = fault->gfn;
	l->slot_id = slot ? slot->id : -1;
}

static __always_inline void read_levels_raw(struct kvm_page_fault *fault, struct fault_levels *l)
{
	struct kvm_page_fault___private *private = (void *)fault;
	__u32 slot_flags;

	__builtin_memset(l, 0, sizeof(*l));
	if (!fault)
		return;
	l->max = BPF_CORE_READ(fault, max_level);
	l->req = BPF_CORE_READ(fault, req_level);
	l->goal = BPF_CORE_READ(fault, goal_level);
	l->nx_disallowed = BPF_CORE_READ(fault, huge_page_disallowed);
	l->has_slot = BPF_CORE_READ(fault, slot) != NULL;
	slot_flags = BPF_CORE_READ(fault, slot, flags); /* 0 without a slot */
	l->slot_dirty = slot_flags & KVMMMU_MEM_LOG_DIRTY_PAGES;
	l->gmem = (fault_has_is_private() && BPF_CORE_READ(private, is_private)) ||
		  (slot_flags & KVMMMU_MEMSLOT_GMEM_ONLY);
	l->gfn = BPF_CORE_READ(fault, gfn);
	l->slot_id = l->has_slot ? BPF_CORE_READ(fault, slot, id) : -1;
}

/*
 * A counted fault's requested level, and why a 4 KiB request was not huge
 * where the guest's mapping (max_level) allowed more, in the order
 * kvm_mmu_hugepage_adjust() decides: dirty logging, then the host's mapping
 * level (and the memslot's alignment), then NX huge pages.
 *
 * guest_memfd comes first: a fault that takes its page from guest_memfd (a
 * private one, or any on a gmem-only memslot: kvm_mmu_faultin_pfn_gmem() in
 * 7.x, kvm_faultin_pfn_private() in 6.12) has its max_level set from the
 * order of guest_memfd's folio, before kvm_mmu_hugepage_adjust() runs; 6.12
 * takes the lower of it and the level before, 7.x replaces the level before
 * (under shadow paging, the guest's own: a page the guest maps at 4 KiB
 * counts here too). guest_memfd's folios are 4 KiB in every kernel read
 * (6.12 to 7.3), so max_level is 4 KiB and kvm_mmu_hugepage_adjust() returns
 * at once, before dirty logging (which KVM refuses on such a memslot anyway)
 * or NX. Where max_level is higher, req_level is guest_memfd's too
 * (kvm_gmem_max_mapping_level(): its folio and the platform's cap, e.g. SNP's
 * RMP; 6.12: the memslot's alignment alone), never the host's page tables.
 */
static __always_inline void count_request_level(struct kvmmmu_thread_stats *s,
						const struct fault_levels *l)
{
	count_level(s, KVMMMU_LEVEL_REQUESTED_4K, l->goal);
	/* an MMIO SPTE (no memslot): kvm_mmu_hugepage_adjust() returned before any of them */
	if (l->goal != PG_LEVEL_4K || !l->has_slot)
		return;
	/* req_level stays 4 KiB (kvm_mmu_do_page_fault()) where max_level is */
	if (l->gmem && l->req <= PG_LEVEL_4K) {
		s->counters[KVMMMU_LEVEL_NOT_HUGE_GMEM]++;
		return;
	}
	if (l->max <= PG_LEVEL_4K)
		return;
	if (l->slot_dirty)
		s->counters[KVMMMU_LEVEL_NOT_HUGE_DIRTY_LOG]++;
	else if (l->req <= PG_LEVEL_4K)
		s->counters[KVMMMU_LEVEL_NOT_HUGE_HOST]++;
	else if (l->nx_disallowed)
		s->counters[KVMMMU_LEVEL_NOT_HUGE_NX]++;
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

#endif
