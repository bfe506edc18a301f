/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structures shared by kvmmmu's BPF programs and user space. Fixed-width
 * types only, so the header compiles in both worlds.
 */
#ifndef KVMMMU_H
#define KVMMMU_H

#include "kvmmmu_hist.h"
#include "kvmmmu_metrics.h"

/* RET_PF_* values index ret_pf[]; every kernel so far uses 0..6. */
#define KVMMMU_RET_PF_SLOTS 16
/*
 * The last slot: a handler's negative return (-EFAULT, -EIO, ...), an error
 * KVM_RUN returns. KVM counts the fault in pf_taken and in no outcome; so
 * that outcomes sum to the faults, kvmmmu names it "error".
 */
#define KVMMMU_RET_PF_ERROR (KVMMMU_RET_PF_SLOTS - 1)
/* A memslot flag (linux/kvm.h's KVM_MEM_LOG_DIRTY_PAGES): dirty logging is on */
#define KVMMMU_MEM_LOG_DIRTY_PAGES (1U << 0)

/* x86 page-fault error code: a reserved bit was set (MMIO SPTEs, arch/x86/include/asm/kvm_host.h)
 */
#define KVMMMU_PFERR_RSVD_MASK (1ULL << 3)

/*
 * A fault's access kind, as kvmmmu_fault_state.access keeps it: KNOWN, and
 * then a write or an instruction fetch (else a read), on a present entry (a
 * protection fault: a write to a read-only page, a fetch from an NX one)
 * or not. Counted once per fault into the access_* counters.
 */
#define KVMMMU_ACC_KNOWN 0x1
#define KVMMMU_ACC_WRITE 0x2
#define KVMMMU_ACC_FETCH 0x4
#define KVMMMU_ACC_PRESENT 0x8

/*
 * From an x86 page-fault error code: P is bit 0, W/R bit 1, I/D bit 4 (SVM's
 * NPF too). RSVD without P is VMX's EPT misconfiguration (a stale MMIO
 * SPTE), which KVM passes as that bit alone: its access is not known.
 */
static inline __u32 kvmmmu_access_from_pferr(__u64 ec)
{
	if ((ec & (KVMMMU_PFERR_RSVD_MASK | 0x1)) == KVMMMU_PFERR_RSVD_MASK)
		return 0;
	return KVMMMU_ACC_KNOWN | (ec & 0x2 ? KVMMMU_ACC_WRITE : 0) |
	       (ec & 0x10 ? KVMMMU_ACC_FETCH : 0) | (ec & 0x1 ? KVMMMU_ACC_PRESENT : 0);
}

/*
 * From a VMX EPT violation's exit qualification (what kvm:kvm_page_fault
 * carries on VMX): bit 1 a write, bit 2 a fetch, bits 3-5 the entry's
 * read/write/execute permissions, any of which makes it present.
 */
static inline __u32 kvmmmu_access_from_ept_qual(__u64 q)
{
	return KVMMMU_ACC_KNOWN | (q & 0x2 ? KVMMMU_ACC_WRITE : 0) |
	       (q & 0x4 ? KVMMMU_ACC_FETCH : 0) | (q & 0x38 ? KVMMMU_ACC_PRESENT : 0);
}

/* Per-thread event counters (the catalogue: kvmmmu_metrics.h). */
enum kvmmmu_counter {
#define KVMMMU_COUNTER_ENUM(id, name, prom, show, help) KVMMMU_##id,
	KVMMMU_COUNTERS(KVMMMU_COUNTER_ENUM)
#undef KVMMMU_COUNTER_ENUM
		KVMMMU_N_COUNTERS,
};

/*
 * The MMU path that ended a fault: the first index of outcomes[][]. In the
 * order of the KVMMMU_PATH_* counters.
 */
enum kvmmmu_fault_path {
	KVMMMU_FP_FAST,
	KVMMMU_FP_TDP_MMU,
	KVMMMU_FP_SHADOW,
	KVMMMU_FP_DIRECT,
	KVMMMU_N_FAULT_PATHS,
};

/* a request's level L (PG_LEVEL_4K = 1 .. 1G = 3) counts in LEVEL_*_4K + L - 1 */
_Static_assert(KVMMMU_LEVEL_REQUESTED_1G == KVMMMU_LEVEL_REQUESTED_4K + 2 &&
		       KVMMMU_LEVEL_INSTALLED_1G == KVMMMU_LEVEL_INSTALLED_4K + 2,
	       "level counters are indexed by level");

/* indices are masked with N - 1 for the verifier: N must be a power of two */
#define KVMMMU_POWER_OF_TWO(n) ((n) > 0 && ((n) & ((n)-1)) == 0)
_Static_assert(KVMMMU_POWER_OF_TWO(KVMMMU_RET_PF_SLOTS), "ret_pf[] is indexed & (N - 1)");
_Static_assert(KVMMMU_POWER_OF_TWO(KVMMMU_N_FAULT_PATHS), "outcomes[] is indexed & (N - 1)");

/* Latency histograms (the catalogue: kvmmmu_metrics.h). */
enum kvmmmu_hist_id {
#define KVMMMU_HIST_ENUM(id, name, words, help) KVMMMU_HIST_##id,
	KVMMMU_HISTS(KVMMMU_HIST_ENUM)
#undef KVMMMU_HIST_ENUM
		KVMMMU_N_HISTS,
};

struct kvmmmu_thread_key {
	__u32 tgid;
	__u32 tid;
};

/* Per-thread state of the fault currently being handled (BPF-private). */
struct kvmmmu_fault_state {
	__u64 walk_ts;	     /* last kvm_mmu_pagetable_walk */
	__u64 element_ts;    /* last kvm_mmu_paging_element of that walk */
	__u64 fault_ts;	     /* kvm_mmu_page_fault entry */
	__u64 memslot_ts;    /* kvm_vcpu_gfn_to_memslot entry */
	__u64 walk_addr;     /* the address that walk was for */
	__u64 changed_gfn;   /* the last TDP MMU SPTE change since the request: gfn */
	__u64 exit_addr;     /* tracepoint model: the page-fault exit's address (CR2, or a GPA) */
	__u32 pending;	     /* an SPTE was requested and is not resolved yet */
	__u32 in_fault;	     /* inside kvm_mmu_page_fault (or a handler) */
	__u32 fast_resolved; /* fast_page_fault fixed this fault */
	__u32 tdp_changes;   /* TDP MMU SPTE changes seen since the request */
	__u32 walked;	     /* a guest walk for this fault: set by the walk, confirmed or
				cleared by the request, ended by the SPTE or a walker error */
	__u32 direct;	     /* direct_page_fault entered in this fault */
	__u32 changed_level; /* ... and level (0: none) */
	__u32 tdp_mmu_fault; /* the request is the TDP MMU's (fault->is_tdp and the VM uses it) */
	__u32 fault_write;   /* the request is for a write */
	__u32 vm_mmu;	     /* the thread's VM: 0 not known yet, 1 no TDP MMU, 2 TDP MMU */
	__u32 exit_pending;  /* tracepoint model: a page-fault exit whose fault has not shown */
	__u32 exit_walked;   /* ... and that fault walked the guest's page tables */
	__u32 lock_known;    /* the thread's VM's mmu_lock is in the lock table */
	__u32 timed;	     /* --sample: this fault is timed (its clock reads, its lock waits) */
	__u32 in_handler;    /* inside a page-fault handler (its entry probed: handler_entries) */
	__u32 handled;	     /* a handler ended in this kvm_mmu_page_fault: a fault KVM counts */
	__u32 pre_lookups;   /* memslot lookups in kvm_mmu_page_fault before a handler: the
				fault's if one follows, else an MMIO exit's emulation */
	__u64 pre_lookup_ns; /* ... the last one's duration, if timed */
	__u32 prefetch;	     /* the request is a prefetch "fault" (async-PF completion,
				KVM_PRE_FAULT_MEMORY): not taken, only its fix counts */
	__u32 access;	     /* the fault's KVMMMU_ACC_* (0: not known) */
	__u64 exit_seq;	     /* tracepoint model: the vCPU's exit count (stat.exits) at the
				page-fault exit; 0: not known (before 6.1) */
	__u64 exit_vcpu;     /* ... the exit's struct kvm_vcpu (0: not known, before 6.1) */
	__u64 request_spurious; /* ... its stat.pf_spurious at the TDP MMU's request */
	/* --metric phases: the fault's time so far in each phase, and the phase in progress */
	__u64 phase_ts; /* entry of the walk or pfn function in progress (function probes) */
	__u64 map_ts;	/* the fault's kvm_mmu_spte_requested */
	__u64 walk_ns;	/* the guest page-table walk */
	__u64 pfn_ns;	/* resolving the host page */
	__u64 lock_ns;	/* mmu_lock waits (added by the mmu_lock object) */
	__u64 map_ns;	/* kvm_mmu_spte_requested to the SPTE set */
	/* --slower: what a slow fault's record says of it */
	__u64 fault_addr;     /* function probes: kvm_mmu_page_fault's cr2_or_gpa */
	__u64 fault_gfn;      /* the request's gfn, then its SPTE's (~0: none seen) */
	__u32 last_access;    /* count_fault()'s KVMMMU_ACC_* */
	__u32 last_ret;	      /* function probes: the handler's RET_PF_* */
	__u32 last_path;      /* ... and its path */
	__u8 level_requested; /* PG_LEVEL_*, 0: none */
	__u8 level_installed;
	__u8 request_slot; /* the request had a memslot (not an MMIO SPTE's) */
	__u8 pad_levels;
	/* function probes: the request's struct kvm_page_fault, read at its handler's return */
	__u64 request_fault;
	/* ... and the fault's vCPU, and its pf_fast statistic at kvm_mmu_page_fault's entry */
	__u64 fault_vcpu;
	__u64 pf_fast;
	/* --slower --stack: the fault's time off the CPU (sleeping or preempted) */
	__u64 off_ts;	  /* switched out at, in a timed fault; 0: on the CPU */
	__u64 off_ns;	  /* all its waits off the CPU */
	__u64 off_max_ns; /* the longest one */
	/* bytes of the thread's stack kept for the wait in progress (wait_stacks), or -errno */
	__s32 off_stack;
	__s32 off_max_stack; /* ... for the longest one; negative: none */
	__u32 off_max_slot;  /* ... and its slot in wait_stacks */
	__u32 pad_off;
};

/*
 * The tracepoint model's rule for the fault in hand, in one place for both
 * sides: BPF applies it at each event (bpf/faults.bpf.c), user space to a
 * request still pending at the final reading (src/trace/source_faults.c).
 */
/* Its path: the TDP MMU's when its request or SPTE changes say so, else shadow if it walked. */
static inline enum kvmmmu_fault_path kvmmmu_model_path(const struct kvmmmu_fault_state *st)
{
	if (st->tdp_mmu_fault || st->tdp_changes)
		return KVMMMU_FP_TDP_MMU;
	return st->walked ? KVMMMU_FP_SHADOW : KVMMMU_FP_DIRECT;
}

/*
 * A request no SPTE followed ended as RET_PF_RETRY under the TDP MMU (which
 * traced its spurious faults up to 6.12, so an untraced end was a retry),
 * else as RET_PF_SPURIOUS. (Where BPF knows the vCPU, it asks KVM's
 * pf_spurious instead: faults_state.bpf.h, resolve_pending().)
 */
static inline int kvmmmu_unset_request_is_retry(const struct kvmmmu_fault_state *st)
{
	return st->tdp_mmu_fault != 0;
}

/* Who a per-thread value belongs to; first member of every per-thread value. */
struct kvmmmu_thread_id {
	__s32 vcpu_id; /* from the vCPU the thread has loaded; -1 when unknown */
	__u8 excluded; /* the thread's process is not traced */
	__u8 ready;    /* filled in: an entry read before this is set has no figures yet */
	__u16 pad;
	char comm[16];	  /* the thread's name when first seen */
	char process[16]; /* its process's name */
	/*
	 * The VM the thread works for: the struct kvm of the vCPU it had loaded
	 * when first seen, or of the first VM whose memslots or dirty log it
	 * changed; 0 when not known. A process may hold several VMs (KVM's
	 * selftests make them in turn): a VM is a struct kvm, not a pid.
	 */
	__u64 kvm;
	/*
	 * ... and when that VM was made (bpf_ktime_get_ns() at KVM_CREATE_VM's
	 * return; 0: before kvmmmu attached): a VM made after another was
	 * freed may get the same address.
	 */
	__u64 kvm_born;
};

/* A VM's birth (the vm_births map, keyed by its struct kvm address). */
struct kvmmmu_vm_birth {
	__u64 born_ns; /* bpf_ktime_get_ns() at KVM_CREATE_VM's return */
	__u32 tgid;    /* the process that made it */
	__u32 epoch;   /* its timeline events so far: --metric regions counts each gap apart */
};

/* What the thread_news ring buffer says of a traced thread. */
enum kvmmmu_thread_news_kind {
	KVMMMU_THREAD_NEW,	   /* its first event: name it, find its vCPU, while it lives */
	KVMMMU_THREAD_EXIT,	   /* it exited: keep its figures, free its map entries */
	KVMMMU_THREAD_NEW_PROCESS, /* the first thread of a process, seen by another object */
};

struct kvmmmu_thread_news {
	struct kvmmmu_thread_key key;
	__u32 kind;
	__u32 group_dead;	    /* EXIT: the last thread of its process */
	struct kvmmmu_thread_id id; /* NEW only */
};

/* How a kvm->mmu_lock wait wanted the lock (bpf/mmu_lock.bpf.c). */
enum kvmmmu_lock_mode {
	KVMMMU_LOCK_READ,
	KVMMMU_LOCK_WRITE,
	KVMMMU_LOCK_MODES,
};

struct kvmmmu_thread_stats {
	struct kvmmmu_thread_id id;
	/* state and counters first: every event touches them, few touch a histogram */
	struct kvmmmu_fault_state st;
	__u64 counters[KVMMMU_N_COUNTERS];
	__u64 ret_pf[KVMMMU_RET_PF_SLOTS];
	/* faults by path and RET_PF_* outcome: each counted fault once */
	__u64 outcomes[KVMMMU_N_FAULT_PATHS][KVMMMU_RET_PF_SLOTS];
	struct kvmmmu_hist hist[KVMMMU_N_HISTS];
	/*
	 * mmu_lock waits inside fault handling, written by the mmu_lock object:
	 * here, where its test of "inside a fault" looks anyway, they cost one
	 * map lookup, not two.
	 */
	struct kvmmmu_hist lock_wait[KVMMMU_LOCK_MODES];
};

/* ---- kvm->mmu_lock contention (bpf/mmu_lock.bpf.c) ---- */

/*
 * The traced VMs' mmu_lock addresses, learned by the faults object from each
 * vCPU thread's first events, so that lock:contention_begin, which sees
 * every contended lock of the system, rejects the others with a few loads.
 * Set-associative: an address has KVMMMU_LOCK_WAYS slots in the set its page
 * number picks (struct kvm is page-aligned: the low bits say nothing). User
 * space clears a process's slots when it exits.
 */
#define KVMMMU_LOCK_SETS 1024
#define KVMMMU_LOCK_WAYS 4
#define KVMMMU_LOCK_SLOTS (KVMMMU_LOCK_SETS * KVMMMU_LOCK_WAYS)
_Static_assert(KVMMMU_POWER_OF_TWO(KVMMMU_LOCK_SETS) && KVMMMU_POWER_OF_TWO(KVMMMU_LOCK_SLOTS),
	       "the lock table is indexed & (N - 1)");

struct kvmmmu_lock_slot {
	__u64 lock; /* &kvm->mmu_lock; 0: free */
	__u32 tgid; /* the VM's process */
	__u32 pad;
};

struct kvmmmu_lock_table {
	struct kvmmmu_lock_slot slots[KVMMMU_LOCK_SLOTS];
	__u32 full; /* a set had no room: not finding a lock proves nothing */
};

/* A wait for a traced mmu_lock in progress on a CPU (the spin runs with preemption off). */
struct kvmmmu_lock_wait {
	__u64 lock; /* 0: none */
	__u64 id;   /* bpf_get_current_pid_tgid() of the waiter */
	__u64 begin_ts;
	__u32 mode;
	/*
	 * Before 5.19 (kprobes on the qrwlock slow paths): how many slow paths
	 * are in progress on this CPU, and at which depth this wait began. A
	 * kretprobe cannot tell locks apart: an interrupt's slow path that
	 * returns inside ours is deeper, and must not end our wait.
	 */
	__u16 depth;
	__u16 wait_depth;
};

/* Before 5.19: a slow path begins on this CPU; BEGAN_WAIT: it opened W's traced wait. */
static inline void kvmmmu_slowpath_enter(struct kvmmmu_lock_wait *w, int began_wait)
{
	w->depth++;
	if (began_wait)
		w->wait_depth = w->depth;
}

/* A slow path returns: whether it is the one whose wait W has open. */
static inline int kvmmmu_slowpath_leave(struct kvmmmu_lock_wait *w)
{
	int ours = w->lock && w->wait_depth == w->depth;

	if (ours)
		w->wait_depth = 0;
	if (w->depth)
		w->depth--;
	return ours;
}

/* Waits outside fault handling (root loads, zaps, ioctls); those inside are the faults entry's. */
struct kvmmmu_lock_stats {
	struct kvmmmu_thread_id id;
	__u64 other_waits[KVMMMU_LOCK_MODES]; /* count */
	__u64 other_wait_ns[KVMMMU_LOCK_MODES];
};

/* ---- MMU lifecycle and dirty logging (bpf/mmu_events.bpf.c) ---- */

/* MMU lifecycle and ioctl counters (the catalogue: kvmmmu_metrics.h). */
enum kvmmmu_mmu_counter {
#define KVMMMU_MMU_COUNTER_ENUM(id, name, prom, help) KVMMMU_##id,
	KVMMMU_MMU_COUNTERS(KVMMMU_MMU_COUNTER_ENUM)
#undef KVMMMU_MMU_COUNTER_ENUM
		KVMMMU_N_MMU_COUNTERS,
};

struct kvmmmu_mmu_stats {
	struct kvmmmu_thread_id id;
	__u64 counters[KVMMMU_N_MMU_COUNTERS];
	__u64 enable_ns;  /* time spent turning dirty logging on, all calls */
	__u64 disable_ns; /* ... and off */
	__u64 get_ns;
	__u64 clear_ns;
	__u64 root_load_ns; /* time in kvm_mmu_load, all calls */
	__u64 root_load_ts; /* a kvm_mmu_load in progress (BPF-private) */
};

/* Timeline events, rare by nature (memslot and dirty-log ioctls), sent through a ring buffer. */
enum kvmmmu_event_kind {
	KVMMMU_EV_MEMSLOT_CREATE,
	KVMMMU_EV_MEMSLOT_DELETE,
	KVMMMU_EV_MEMSLOT_UPDATE,
	KVMMMU_EV_DIRTY_LOG_ON,
	KVMMMU_EV_DIRTY_LOG_OFF,
	KVMMMU_EV_GET_DIRTY_LOG,
	KVMMMU_EV_CLEAR_DIRTY_LOG,
	KVMMMU_EV_ZAP_ALL_FAST,
};

struct kvmmmu_event {
	__u64 ts_ns;	   /* bpf_ktime_get_ns() at the end of the call */
	__u64 duration_ns; /* how long the kernel took */
	__u64 faults;	   /* faults the VM had taken so far (kvmmmu's count) */
	__u64 gpa, size;   /* the memslot, for memslot events */
	__u32 tgid, tid;
	__u32 kind;
	__u32 slot;
	__s32 ret;
	__u32 epoch;	/* the VM's events so far, this one included (0: VM not known); faults
			   between this and its previous event are counted in regions of EPOCH - 1 */
	__u64 kvm;	/* the VM the call was for (struct kvm), 0 when not known */
	__u64 kvm_born; /* ... and when it was made (struct kvmmmu_thread_id) */
};

/* Global health counters, in each BPF object's .bss; user space adds them up. */
struct kvmmmu_health {
	__u64 drops;	     /* events lost because a per-thread map was full */
	__u64 bad_ret;	     /* RET_PF values beyond KVMMMU_RET_PF_SLOTS */
	__u64 news_lost;     /* thread news the ring buffer had no room for */
	__u64 calls_full;    /* KVM ioctls not timed: the in-flight call map was full */
	__u64 slots_full;    /* memslot flags not kept: the memslot map was full */
	__u64 timeline_lost; /* timeline events the ring buffer had no room for */
	__u64 exits_lost;    /* function exits never seen: a fault or handler entered again first */
	__u64 kprobe_missed; /* hits our kprobes ran no handler for (user space fills it in) */
	__u64 prog_missed;   /* runs of the fault programs the kernel skipped: one re-entered on
				a CPU (bpf_prog_info.recursion_misses; user space fills it in) */
	__u64 pids_full;     /* a command's child not traced: the pid filter was full */
	__u64 vm_switches;   /* threads that changed a second VM's memslots or dirty log: their
				per-thread figures stay with their first VM */
	__u64 slow_lost;     /* --slower: slow faults the ring buffer had no room for */
	__u64 regions_full;  /* --metric regions: faults in no region, the region map was full */
};

/* --metric regions: a VM's faults in one guest-physical region of one memslot. */
struct kvmmmu_region_key {
	__u64 kvm; /* the VM (struct kvmmmu_thread_id) */
	__u64 kvm_born;
	__u64 region; /* the GPA >> region_shift */
	__u32 tgid;
	__s32 slot;  /* the memslot's id; -1: not known (a fast-path fault) */
	__u32 epoch; /* the VM's timeline events before the fault (struct kvmmmu_vm_birth) */
	__u32 pad;
};

/* The phases of a fault, in the order they come (--metric phases, --slower). */
enum kvmmmu_phase {
	KVMMMU_PHASE_WALK,
	KVMMMU_PHASE_PFN,
	KVMMMU_PHASE_LOCK,
	KVMMMU_PHASE_MAP,
	KVMMMU_PHASE_OTHER,
	KVMMMU_N_PHASES,
};

/* kvmmmu-hist --slower: one fault that took at least that long (the slow_faults ring buffer). */
struct kvmmmu_slow_fault {
	__u64 ts_ns; /* its end, bpf_ktime_get_ns() */
	__u64 kvm;   /* its VM (struct kvmmmu_thread_id) */
	__u64 kvm_born;
	__u64 gpa; /* its guest-physical address (the page's, where only the gfn is seen);
		      ~0: not seen */
	__u64 gva; /* shadow paging: the guest-virtual address; ~0 under TDP */
	__u64 ns;  /* its time: the whole fault, or the tracepoint model's walk to SPTE */
	__u64 phase_ns[KVMMMU_N_PHASES]; /* 0 where not measured */
	__u32 tgid;
	__u32 tid;
	__s32 vcpu_id;
	__s32 ret;	      /* RET_PF_* */
	__u8 path;	      /* enum kvmmmu_fault_path */
	__u8 access;	      /* KVMMMU_ACC_* (0: not known) */
	__u8 level_requested; /* PG_LEVEL_* (1: 4 KiB); 0: no request seen */
	__u8 level_installed; /* ... the level its SPTE was set at; 0: none set */
	/* --stack: bytes of the stack of its longest wait off the CPU in the record's ips
	   (struct kvmmmu_slow_fault_stack); negative: none (-errno: not kept) */
	__s32 stack_len;
	char process[16];
	__u64 offcpu_ns;     /* --stack: its time off the CPU (sleeping or preempted) */
	__u64 offcpu_max_ns; /* ... its longest stretch */
};

/* --stack: the frames kept of a slow fault's longest wait off the CPU */
#define KVMMMU_STACK_DEPTH 64

/* --stack: a slow fault's record, and the kernel stack of its longest wait off the CPU */
struct kvmmmu_slow_fault_stack {
	struct kvmmmu_slow_fault f;
	__u64 ips[KVMMMU_STACK_DEPTH]; /* innermost first; f.stack_len bytes of them */
};

/*
 * --stack: a thread's own copies of the stacks it left the CPU in, during a
 * timed fault: its longest wait's so far, and the one in progress's in the
 * other slot. A thread's own, so that no other stack can take its place.
 */
struct kvmmmu_wait_stacks {
	__u64 ips[2][KVMMMU_STACK_DEPTH];
	__u32 longest; /* the slot of the fault's longest wait so far (st.off_max_slot) */
	__u32 pad;
};

#endif
