/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The faults object's shared state (bpf/faults.bpf.c): what user space sets
 * before load, each thread's entry, and the helpers every accounting model
 * ends a fault with (count_ret, close_fault) or asks (the VM's MMU).
 */
#ifndef KVMMMU_FAULTS_STATE_BPF_H
#define KVMMMU_FAULTS_STATE_BPF_H

/* Set by user space from the running kernel's BTF (RET_PF_* enum). */
const volatile int ret_pf_fixed = -1;
const volatile int ret_pf_spurious = -1;
const volatile int ret_pf_emulate = -1;
const volatile int ret_pf_retry = -1;
/*
 * What a write fault that maps its page read-only returns: WRITE_PROTECTED
 * (6.12+: "KVM: x86/mmu: Trigger unprotect logic only on write-protection
 * page faults", 989a84c93f59), else EMULATE.
 */
const volatile int ret_pf_write_protected = -1;
/* kvm.tdp_mmu as the module has it (6.3+, where the VM keeps no copy): -1 unknown, 0, 1 */
const volatile int tdp_mmu_param = -1;
/* --sample N: 1 fault in N is timed (clock reads, histograms); every one is counted. */
const volatile __u32 sample_every = 1;
/*
 * Which raw argument of kvm:kvm_page_fault holds the error code: 2 where the
 * tracepoint passes the vCPU first (6.1+: "KVM: Add extra information in
 * kvm_page_fault trace point", faa03b39722a), 1 before; -1 unknown (no filter).
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
 * ... and their returns tell the fast path's fixes too (fixed_on_fast_path()):
 * the kernel has KVM's pf_fast statistic. Else the fast_page_fault tracepoint
 * does, attached for it; otherwise only for its count (--metric events).
 */
const volatile bool fast_at_return = false;
/*
 * kvmmmu:kvm_mmu_page_fault_done is attached (kernel-patches/): it ends every
 * fault KVM counts, with its outcome, and the tracepoint model only says
 * which path the fault took.
 */
const volatile bool done_event = false;
/* --metric regions: log2 of the region size faults are counted in (30: 1 GiB); 0: off */
const volatile __u32 region_shift = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* user space sizes it: a page's worth when off */
	__type(key, struct kvmmmu_region_key);
	__type(value, __u64);
} region_faults SEC(".maps");

/* --metric regions: a fault at GPA, in memslot SLOT (-1: not known), of the thread's VM. */
static __always_inline void count_region(struct kvmmmu_thread_stats *s, __u64 gpa, int slot)
{
	struct kvmmmu_region_key k = {.kvm = s->id.kvm,
				      .kvm_born = s->id.kvm_born,
				      .region = gpa >> (region_shift & 63),
				      .tgid = bpf_get_current_pid_tgid() >> 32,
				      .slot = slot};
	struct kvmmmu_vm_birth *b = bpf_map_lookup_elem(&vm_births, &k.kvm);
	__u64 one = 1, *n;

	/* counted apart between two timeline events of the VM (mmu_events.bpf.c) */
	if (b && b->tgid == k.tgid && b->born_ns == k.kvm_born)
		k.epoch = b->epoch;

	n = bpf_map_lookup_elem(&region_faults, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(&region_faults, &k, &one, BPF_NOEXIST) == -17 /* EEXIST */ &&
		 (n = bpf_map_lookup_elem(&region_faults, &k)))
		__sync_fetch_and_add(n, 1); /* another CPU made it first */
	else if (!bpf_map_lookup_elem(&region_faults, &k))
		__sync_fetch_and_add(&health.regions_full, 1);
}

/* --metric phases: where each fault's time goes (walk, pfn, mmu_lock, map, other). */
const volatile bool phases = false;
/* kvmmmu-hist --slower: a timed fault at least this long is reported on slow_faults; 0: none */
const volatile __u64 slower_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries,
	       4096); /* user space sizes it with --slower (and --stack), else a page */
} slow_faults SEC(".maps");
/* --slower --stack: records carry the stack of the fault's longest wait off the CPU */
const volatile bool slow_stacks = false;
/*
 * ... kept per thread (struct kvmmmu_wait_stacks) at sched_switch: made as
 * threads first leave the CPU in a fault, freed by user space as they exit;
 * room for as many as the per-thread maps (user space sizes it).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct kvmmmu_thread_key);
	__type(value, struct kvmmmu_wait_stacks);
} wait_stacks SEC(".maps");
KVMMMU_BLANK_THREAD(blank_wait_stacks, struct kvmmmu_wait_stacks);
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

/*
 * A fault KVM counts (pf_taken), and its access kind (st.access, which it
 * uses up): read, write or fetch, and present or not, or unknown.
 */
static __always_inline void count_fault(struct kvmmmu_thread_stats *s)
{
	__u32 a = s->st.access;

	s->counters[KVMMMU_FAULTS]++;
	s->st.access = 0;
	s->st.last_access = a;
	if (!(a & KVMMMU_ACC_KNOWN)) {
		s->counters[KVMMMU_ACCESS_UNKNOWN]++;
		return;
	}
	if (a & KVMMMU_ACC_FETCH)
		s->counters[KVMMMU_ACCESS_FETCH]++;
	else if (a & KVMMMU_ACC_WRITE)
		s->counters[KVMMMU_ACCESS_WRITE]++;
	else
		s->counters[KVMMMU_ACCESS_READ]++;
	if (a & KVMMMU_ACC_PRESENT)
		s->counters[KVMMMU_ACCESS_PRESENT]++;
	else
		s->counters[KVMMMU_ACCESS_NOT_PRESENT]++;
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

/* A timed fault starts: no time in any phase yet. */
static __always_inline void phases_start(struct kvmmmu_thread_stats *s)
{
	s->st.phase_ts = 0;
	s->st.map_ts = 0;
	s->st.walk_ns = 0;
	s->st.pfn_ns = 0;
	s->st.lock_ns = 0;
	s->st.map_ns = 0;
}

/* --slower: a fault starts, nothing of its request or SPTE seen yet. */
static __always_inline void slow_start(struct kvmmmu_thread_stats *s)
{
	s->st.fault_gfn = ~0ULL;
	s->st.level_requested = 0;
	s->st.level_installed = 0;
	s->st.off_ns = 0;
	s->st.off_max_ns = 0;
	s->st.off_max_stack = -1;
}

/*
 * --slower: the timed fault that ends took NS, at least slower_ns: its
 * record, before phases_close() forgets its phases. GVA: the address
 * shadow paging walked (~0 under TDP); GPA: the TDP fault's address, else
 * the page of the SPTE's gfn (~0: none seen).
 */
static __always_inline void report_slow(struct kvmmmu_thread_stats *s, __u64 ns, int ret,
					__u32 path, __u64 gva, __u64 gpa)
{
	__u64 id = bpf_get_current_pid_tgid(), sum;
	struct kvmmmu_thread_key key = {.tgid = id >> 32, .tid = (__u32)id};
	struct kvmmmu_slow_fault *r;
	struct kvmmmu_wait_stacks *w;

	if (!slower_ns || ns < slower_ns)
		return;
	/* two sizes: the stack's 512 bytes only with --stack */
	if (slow_stacks)
		r = bpf_ringbuf_reserve(&slow_faults, sizeof(struct kvmmmu_slow_fault_stack), 0);
	else
		r = bpf_ringbuf_reserve(&slow_faults, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&health.slow_lost, 1);
		return;
	}
	r->ts_ns = bpf_ktime_get_ns();
	r->kvm = s->id.kvm;
	r->kvm_born = s->id.kvm_born;
	r->gpa = gpa;
	r->gva = gva;
	r->ns = ns;
	r->phase_ns[KVMMMU_PHASE_WALK] = s->st.walk_ns;
	r->phase_ns[KVMMMU_PHASE_PFN] = s->st.pfn_ns;
	r->phase_ns[KVMMMU_PHASE_LOCK] = s->st.lock_ns;
	r->phase_ns[KVMMMU_PHASE_MAP] = s->st.map_ns;
	sum = s->st.walk_ns + s->st.pfn_ns + s->st.lock_ns + s->st.map_ns;
	r->phase_ns[KVMMMU_PHASE_OTHER] = ns > sum ? ns - sum : 0;
	r->tgid = id >> 32;
	r->tid = (__u32)id;
	r->vcpu_id = s->id.vcpu_id;
	r->ret = ret;
	r->path = path;
	r->access = s->st.last_access;
	r->level_requested = s->st.level_requested;
	r->level_installed = s->st.level_installed;
	r->stack_len = s->st.off_max_ns ? s->st.off_max_stack : -1;
	r->offcpu_ns = s->st.off_ns;
	r->offcpu_max_ns = s->st.off_max_ns;
	__builtin_memcpy(r->process, s->id.process, sizeof(r->process));
	if (slow_stacks) {
		struct kvmmmu_slow_fault_stack *rs = (void *)r;
		__u32 slot = s->st.off_max_slot & 1;

		/*
		 * The slot the longest wait's stack went into: a wait that
		 * preempts us here writes the other one (and, were it longer
		 * still, its record is this one, already past that field)
		 */
		w = r->stack_len > 0 ? bpf_map_lookup_elem(&wait_stacks, &key) : NULL;
		if (r->stack_len > 0 && !w)
			r->stack_len = -ENOENT;
		else if (w && bpf_probe_read_kernel(rs->ips, sizeof(rs->ips), w->ips[slot]))
			r->stack_len = -EFAULT;
	}
	bpf_ringbuf_submit(r, 0);
}

/*
 * A timed fault of TOTAL ns ends: each phase it went through, and the rest
 * as "other". Phases are measured inside the fault, one at a time, so they
 * never add up to more than TOTAL; should they (a wait the lock object gave
 * the wrong fault), "other" is 0 and their sum shows the excess.
 */
static __always_inline void phases_close(struct kvmmmu_thread_stats *s, __u64 total)
{
	__u64 sum = s->st.walk_ns + s->st.pfn_ns + s->st.lock_ns + s->st.map_ns;

	if (!phases)
		return;
	if (s->st.walk_ns)
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_PHASE_WALK], s->st.walk_ns);
	if (s->st.pfn_ns)
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_PHASE_PFN], s->st.pfn_ns);
	if (s->st.lock_ns)
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_PHASE_LOCK], s->st.lock_ns);
	if (s->st.map_ns)
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_PHASE_MAP], s->st.map_ns);
	kvmmmu_hist_add(&s->hist[KVMMMU_HIST_PHASE_OTHER], total > sum ? total - sum : 0);
	phases_start(s);
}

/*
 * --metric phases: the fault's SPTE is requested, its mapping starts (under
 * mmu_lock, the host page in hand). Function probes time faults from
 * kvm_mmu_page_fault; the tracepoint model from the walk (shadow paging),
 * whose end is its last kvm_mmu_paging_element.
 */
static __always_inline void phases_map_starts(struct kvmmmu_thread_stats *s)
{
	if (func_mode ? !(s->st.fault_ts && s->st.in_handler) : !(s->st.walked && s->st.walk_ts))
		return;
	if (!func_mode && s->st.element_ts > s->st.walk_ts)
		s->st.walk_ns = s->st.element_ts - s->st.walk_ts;
	s->st.map_ts = bpf_ktime_get_ns();
}

/* ... and ends at NOW, with the fault's SPTE (or its MMIO SPTE) set. */
static __always_inline void phases_map_ends(struct kvmmmu_thread_stats *s, __u64 now)
{
	if (!s->st.map_ts)
		return;
	s->st.map_ns += now - s->st.map_ts;
	s->st.map_ts = 0;
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
	if (!done_event) { /* else kvm_mmu_page_fault_done counts it */
		s->counters[KVMMMU_PATH_FAST + path]++;
		count_ret(s, ret, path);
	}
	if (now && s->st.walked && s->st.walk_ts) {
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_WALK_TO_SPTE], now - s->st.walk_ts);
		report_slow(s, now - s->st.walk_ts, ret, path, s->st.walk_addr,
			    s->st.fault_gfn == ~0ULL
				    ? ~0ULL
				    : s->st.fault_gfn << 12 | (s->st.walk_addr & 0xfff));
		/* the tracepoint model's fault time: its phases are parts of it */
		phases_close(s, now - s->st.walk_ts);
	}
}

/*
 * Tracepoint model: a request that nothing resolved. The shadow MMU and the
 * legacy direct MMU found the SPTE already right (mmu_set_spte() traces
 * nothing then): spurious. Up to 6.12 the TDP MMU traced its spurious
 * faults, so there nothing meant it lost a cmpxchg, or met a frozen SPTE:
 * RET_PF_RETRY. Later kernels (7.2 and 7.3 at least) return RET_PF_SPURIOUS
 * before making an SPTE when the one there already allows the access
 * (tdp_mmu_map_handle_target_level), tracing nothing: then KVM's own count
 * tells, as kvm_mmu_page_fault() has added the fault to the vCPU's
 * pf_spurious by the time any later event of its thread runs.
 */
static __always_inline void resolve_pending(struct kvmmmu_thread_stats *s)
{
	struct kvm_vcpu *vcpu = (void *)s->st.exit_vcpu;
	int ret;

	if (!s->st.pending)
		return;
	ret = kvmmmu_unset_request_is_retry(&s->st) ? ret_pf_retry : ret_pf_spurious;
	/* (more, not other: a debugfs write may zero the statistic meanwhile) */
	if (ret == ret_pf_retry && vcpu && !s->st.prefetch &&
	    BPF_CORE_READ(vcpu, stat.pf_spurious) > s->st.request_spurious)
		ret = ret_pf_spurious;
	close_fault(s, ret, 0);
	s->st.walked = 0;
}

/*
 * Whether the thread's VM uses the TDP MMU, found once per thread: before
 * 6.3 from its struct kvm, since then from the module parameter (read-only
 * while KVM is loaded, so the same for every VM).
 */
static __always_inline bool thread_vm_tdp_mmu(struct kvmmmu_thread_stats *s)
{
	struct kvm_vcpu *vcpu;

	if (!s->st.vm_mmu) {
		if (kvm_has_vm_tdp_mmu_flag()) {
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

#endif
