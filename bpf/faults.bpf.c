// SPDX-License-Identifier: GPL-2.0
/*
 * Fault accounting: counts, RET_PF_* outcomes, paths and latencies of KVM MMU
 * faults, per thread (user space folds threads into vCPUs and VMs).
 *
 * Three sources, chosen by user space before load:
 *  - function probes (fentry/fexit, or kprobe/kretprobe) on kvm_mmu_page_fault,
 *    the page-fault handlers, direct_page_fault and kvm_vcpu_gfn_to_memslot
 *    give exact RET_PF_* values and handler times;
 *  - tracepoints alone (func_mode == false) reconstruct each fault from
 *    kvm_mmu_spte_requested and what follows it: kvm_mmu_set_spte means
 *    RET_PF_FIXED, mark_mmio_spte RET_PF_EMULATE, nothing before the next
 *    fault RET_PF_SPURIOUS (mmu_set_spte() finds the SPTE already right);
 *    where the backend traces its page-fault exits (kvm:kvm_page_fault), an
 *    exit whose fault never requested an SPTE was retried (see on_exit);
 *  - with tracepoints, kvmmmu:kvm_mmu_page_fault_done where KVM is built from
 *    kernel-patches/: one event a fault, with its outcome, goal level and
 *    whether the fast path resolved it (faults_done.bpf.h).
 * Every handler does one map lookup; only --slower's records go through a ring buffer.
 */
#include "kvmmmu_core.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "kvmmmu.h"
#include "kvmmmu_maps.bpf.h" /* before the helpers, which use its maps */
#include "kvmmmu.bpf.h"
#include "core_fixes.bpf.h"

/* the state every model shares, then the three models (user space picks one before load) */
#include "faults_state.bpf.h"
#include "faults_view.bpf.h"
#include "faults_tracepoints.bpf.h"
#include "faults_done.bpf.h"
#include "faults_functions.bpf.h"

/* ---- thread lifecycle: every model's entries are freed as threads exit ---- */

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

/*
 * --slower --stack: where a timed fault waits off the CPU (a userfaultfd
 * handler, swap-in I/O, a sleeping lock, preemption), which a fault's
 * phases alone cannot tell. Switching out, the vCPU thread (current, prev)
 * keeps the kernel stack it sleeps in; switching back in, the wait's length
 * goes to its fault, whose record takes the longest wait's stack. Attached
 * only with --stack: it fires at every context switch of the host, and
 * looks up, never makes, a thread's entry (its stacks' it makes, in a
 * fault).
 */
static __always_inline struct kvmmmu_thread_key key_of(struct task_struct *t)
{
	return (struct kvmmmu_thread_key){.tgid = BPF_CORE_READ(t, tgid),
					  .tid = BPF_CORE_READ(t, pid)};
}

static __always_inline struct kvmmmu_thread_stats *thread_of(struct kvmmmu_thread_key *key)
{
	struct kvmmmu_thread_stats *s = bpf_map_lookup_elem(&thread_stats, key);

	return s && s->id.ready ? s : NULL;
}

/*
 * The thread KEY leaves the CPU: its stack, into the slot its longest wait
 * does not hold. Bytes kept, or -errno (-ENOENT: no room for the thread:
 * the map holds as many threads as thread_stats).
 */
static __always_inline __s32 keep_stack(void *ctx, struct kvmmmu_thread_key *key)
{
	struct kvmmmu_wait_stacks *w = bpf_map_lookup_elem(&wait_stacks, key);
	__u32 zero = 0;
	void *blank;

	if (!w && (blank = bpf_map_lookup_elem(&blank_wait_stacks, &zero))) {
		bpf_map_update_elem(&wait_stacks, key, blank, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&wait_stacks, key);
	}
	if (!w)
		return -ENOENT;
	return bpf_get_stack(ctx, w->ips[(w->longest ^ 1) & 1], sizeof(w->ips[0]), 0);
}

static __always_inline int on_switch(void *ctx, struct task_struct *prev, struct task_struct *next)
{
	struct kvmmmu_thread_key key = key_of(prev);
	struct kvmmmu_thread_stats *s = thread_of(&key);
	struct kvmmmu_wait_stacks *w;
	__u64 now, ns;

	if (s && (func_mode ? s->st.in_fault && s->st.fault_ts : s->st.walked && s->st.walk_ts)) {
		s->st.off_ts = bpf_ktime_get_ns();
		s->st.off_stack = keep_stack(ctx, &key);
	}
	key = key_of(next);
	s = thread_of(&key);
	if (!s || !s->st.off_ts)
		return 0;
	now = bpf_ktime_get_ns();
	ns = now > s->st.off_ts ? now - s->st.off_ts : 0;
	s->st.off_ts = 0;
	s->st.off_ns += ns;
	if (ns > s->st.off_max_ns) {
		s->st.off_max_ns = ns;
		s->st.off_max_stack = s->st.off_stack;
		/* the wait's stack is the longest's now: its slot is kept */
		w = s->st.off_stack > 0 ? bpf_map_lookup_elem(&wait_stacks, &key) : NULL;
		if (w) {
			w->longest ^= 1;
			s->st.off_max_slot = w->longest;
		} else if (s->st.off_stack > 0) {
			s->st.off_max_stack = -ENOENT; /* freed meanwhile: nothing to keep */
		}
	}
	return 0;
}
TP_PAIR(sched_switch, on_switch(ctx, prev, next), bool preempt, struct task_struct *prev,
	struct task_struct *next)
