// SPDX-License-Identifier: GPL-2.0
/*
 * kvm->mmu_lock contention: how long vCPUs (and the VMM's other threads)
 * wait for it, for read (TDP MMU faults) and for write (shadow MMU faults,
 * zaps, dirty-log changes), per thread.
 *
 * lock:contention_begin/end (5.19+) fire for every contended lock in the
 * system; a begin is kept only when its lock is the mmu_lock of a traced VM
 * of the thread's own process (its vCPUs, or the VMM's ioctl threads), as
 * the lock table the faults object fills says. Before 5.19 the same comes
 * from kprobes on queued_{read,write}_lock_slowpath.
 */
#include "kvmmmu_core.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "kvmmmu.h"
#include "kvmmmu_maps.bpf.h" /* before the helpers, which use its maps */
#include "kvmmmu.bpf.h"

/* include/trace/events/lock.h */
#define LCB_F_SPIN (1U << 0)
#define LCB_F_READ (1U << 1)
#define LCB_F_WRITE (1U << 2)

KVMMMU_THREAD_MAP(lock_stats, struct kvmmmu_lock_stats);
KVMMMU_BLANK_THREAD(blank_thread, struct kvmmmu_lock_stats);

/*
 * The slow check, for when the lock table is full: LOCK is the mmu_lock of
 * the VM of the vCPU the thread has loaded, or a struct kvm whose mm is the
 * thread's own (the VMM's ioctl threads).
 */
static __always_inline bool is_mmu_lock(void *lock)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u32 off = bpf_core_field_offset(struct kvm, mmu_lock);
	struct kvm_vcpu *vcpu = current_vcpu();
	struct kvm *kvm;

	if (vcpu)
		return (void *)BPF_CORE_READ(vcpu, kvm) + off == lock;
	kvm = lock - off;
	return BPF_CORE_READ(kvm, mm) == BPF_CORE_READ(task, mm) && BPF_CORE_READ(task, mm);
}

/*
 * Whether LOCK is the mmu_lock of a traced VM of the calling process: a few
 * loads in the lock table, which the faults object fills from the vCPUs.
 */
static __always_inline bool traced_mmu_lock(void *lock, __u64 *id)
{
	struct kvmmmu_lock_table *t;
	struct kvmmmu_lock_slot *slot;
	__u32 zero = 0;

	t = bpf_map_lookup_elem(&mmu_locks, &zero);
	if (!t)
		return false;
	slot = lock_slot(t, (__u64)lock);
	if (!slot && !t->full)
		return false; /* nearly every other lock of the system ends here */
	*id = bpf_get_current_pid_tgid();
	if (slot)
		return slot->tgid == *id >> 32;
	return is_mmu_lock(lock);
}

/*
 * The wait in progress on this CPU. An rwlock waiter spins with preemption
 * off, so its begin and end run on one CPU with no other task between them;
 * a handler that interrupts the spin and waits for another lock is told
 * apart by the lock address (and only traced mmu_locks are ever kept).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kvmmmu_lock_wait);
} lock_wait SEC(".maps");

static __always_inline struct kvmmmu_lock_stats *thread(void)
{
	return thread_entry(&lock_stats, &blank_thread, filter_pids ? &traced_pids : NULL,
			    &thread_news, true, &health);
}

/* The faults object takes its RET_PF_* from function probes (set by user space, as there). */
const volatile bool func_mode = false;

/*
 * The thread's faults entry when it is handling a fault: inside
 * kvm_mmu_page_fault (function probes), or between a guest walk and its SPTE
 * (the shadow path, when only tracepoints are there). NULL otherwise. With
 * function probes a walk says nothing: the emulator walks too, outside any
 * fault, and a root reload's wait after that is no fault's.
 */
static __always_inline struct kvmmmu_thread_stats *in_fault(const struct kvmmmu_thread_key *key)
{
	struct kvmmmu_thread_stats *t = bpf_map_lookup_elem(&thread_stats, key);

	if (!t || !t->id.ready)
		return NULL;
	return (func_mode ? t->st.in_fault : t->st.walked) ? t : NULL;
}

/* Begin: only a clock read and a per-CPU store, once the lock is known to be traced. */
static __always_inline int begin(void *lock, __u32 mode)
{
	struct kvmmmu_lock_wait *w;
	__u32 zero = 0;
	__u64 id;

	if (!traced_mmu_lock(lock, &id))
		return 0;
	w = bpf_map_lookup_elem(&lock_wait, &zero);
	if (!w)
		return 0;
	w->begin_ts = bpf_ktime_get_ns();
	w->lock = (__u64)lock;
	w->id = id;
	w->mode = mode;
	return 0;
}

/*
 * Ends the wait on LOCK. The qrwlock slow path takes its wait_lock through
 * the qspinlock slow path, which fires a begin/end pair of its own inside
 * ours, and contention in IRQ context can interleave too: only the end of
 * the lock the wait began on closes it. LOCK is NULL from a kretprobe, which
 * has no argument to compare: there the first return closes the wait.
 */
static __always_inline int end(void *lock)
{
	struct kvmmmu_thread_stats *f;
	struct kvmmmu_thread_key key;
	struct kvmmmu_lock_stats *s;
	struct kvmmmu_lock_wait *w;
	__u32 zero = 0, mode;
	__u64 id, ns;

	w = bpf_map_lookup_elem(&lock_wait, &zero);
	if (!w || !w->lock || (lock && w->lock != (__u64)lock))
		return 0;
	id = bpf_get_current_pid_tgid();
	if (w->id != id)
		return 0;
	key.tgid = id >> 32;
	key.tid = (__u32)id;
	ns = bpf_ktime_get_ns() - w->begin_ts;
	mode = w->mode == KVMMMU_LOCK_WRITE ? KVMMMU_LOCK_WRITE : KVMMMU_LOCK_READ;
	w->lock = 0;
	/*
	 * A fault's wait goes to the faults entry, which the in-fault test finds
	 * anyway; with --sample only a timed fault's, as its time is the share's
	 * denominator (every wait would make the share N times too big).
	 */
	f = in_fault(&key);
	if (f) {
		if (f->st.timed) {
			kvmmmu_hist_add(&f->lock_wait[mode], ns);
			f->st.lock_ns += ns; /* the fault's mmu_lock phase (--metric phases) */
		}
		return 0;
	}
	s = thread();
	if (!s)
		return 0;
	s->other_waits[mode]++;
	s->other_wait_ns[mode] += ns;
	return 0;
}

static __always_inline int on_contention_begin(void *lock, unsigned int flags)
{
	/* mmu_lock is an rwlock: spinning, for read or for write */
	if (!(flags & LCB_F_SPIN) || !(flags & (LCB_F_READ | LCB_F_WRITE)))
		return 0;
	return begin(lock, flags & LCB_F_WRITE ? KVMMMU_LOCK_WRITE : KVMMMU_LOCK_READ);
}

TP_PAIR(contention_begin, on_contention_begin(lock, flags), void *lock, unsigned int flags)
TP_PAIR(contention_end, end(lock), void *lock, int ret)

/*
 * Before the tracepoints (5.19): the qrwlock slow paths, entered only under
 * contention. Every slow path on the CPU is counted in, so that a return
 * closes our wait only at the depth it began (struct kvmmmu_lock_wait).
 */
static __always_inline int slowpath_begin(void *lock, __u32 mode)
{
	struct kvmmmu_lock_wait *w;
	__u32 zero = 0;
	__u64 before;

	w = bpf_map_lookup_elem(&lock_wait, &zero);
	if (!w)
		return 0;
	before = w->begin_ts;
	begin(lock, mode);
	kvmmmu_slowpath_enter(w, w->begin_ts != before);
	return 0;
}

static __always_inline int slowpath_end(void)
{
	struct kvmmmu_lock_wait *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&lock_wait, &zero);
	if (w && kvmmmu_slowpath_leave(w))
		end(NULL);
	return 0;
}

KPROBE_PAIR(queued_read_lock_slowpath, slowpath_begin(lock, KVMMMU_LOCK_READ), slowpath_end(),
	    void *lock)
KPROBE_PAIR(queued_write_lock_slowpath, slowpath_begin(lock, KVMMMU_LOCK_WRITE), slowpath_end(),
	    void *lock)

char LICENSE[] SEC("license") = "GPL";
