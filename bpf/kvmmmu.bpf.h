/* SPDX-License-Identifier: GPL-2.0 */
/* BPF-side helpers shared by kvmmmu's BPF objects. */
#ifndef KVMMMU_BPF_H
#define KVMMMU_BPF_H

/*
 * The vCPU the current thread has loaded, or NULL. vcpu_load() registers
 * vcpu->preempt_notifier on the task, and KVM is the only user of preempt
 * notifiers, so the task's first notifier leads back to its kvm_vcpu. The
 * VM's mm must be the task's, or the guess is wrong and we say nothing.
 * (kvm_running_vcpu would be simpler, but it is a per-CPU data symbol that
 * kallsyms lacks without CONFIG_KALLSYMS_ALL.)
 */
static __always_inline struct kvm_vcpu *current_vcpu(void)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct hlist_node *first = BPF_CORE_READ(task, preempt_notifiers.first);
	struct kvm_vcpu *vcpu;

	if (!first)
		return NULL;
	vcpu = (void *)first - bpf_core_field_offset(struct kvm_vcpu, preempt_notifier) -
	       bpf_core_field_offset(struct preempt_notifier, link);
	if (BPF_CORE_READ(vcpu, kvm, mm) != BPF_CORE_READ(task, mm))
		return NULL;
	return vcpu;
}

static __always_inline int current_vcpu_id(void)
{
	struct kvm_vcpu *vcpu = current_vcpu();

	return vcpu ? BPF_CORE_READ(vcpu, vcpu_id) : -1;
}

/* VCPU's VM exits so far (kvm_vcpu_stat.exits), or 0 without a vCPU. */
static __always_inline __u64 vcpu_exits(struct kvm_vcpu *vcpu)
{
	return vcpu ? BPF_CORE_READ(vcpu, stat.exits) : 0;
}

/* The first slot of LOCK's set in the mmu_lock table (kvmmmu.h). */
static __always_inline __u32 lock_set_base(__u64 lock)
{
	return (((lock >> 12) ^ (lock >> 22)) & (KVMMMU_LOCK_SETS - 1)) * KVMMMU_LOCK_WAYS;
}

/* LOCK's slot in the mmu_lock table, or NULL. */
static __always_inline struct kvmmmu_lock_slot *lock_slot(struct kvmmmu_lock_table *t, __u64 lock)
{
	__u32 base = lock_set_base(lock);

	for (int i = 0; i < KVMMMU_LOCK_WAYS; i++) {
		struct kvmmmu_lock_slot *slot = &t->slots[(base + i) & (KVMMMU_LOCK_SLOTS - 1)];

		if (slot->lock == lock)
			return slot;
	}
	return NULL;
}

static __always_inline void kvmmmu_hist_add(struct kvmmmu_hist *h, __u64 ns)
{
	__u64 slot = kvmmmu_hist_slot(ns);

	/*
	 * Bound the register that indexes, not a zero-extended copy of it:
	 * older verifiers (6.1) do not carry the bound back to the original.
	 */
	barrier_var(slot);
	if (slot >= KVMMMU_HIST_BUCKETS)
		slot = KVMMMU_HIST_BUCKETS - 1;
	barrier_var(slot);
	h->slots[slot]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

/*
 * When VM KVM of the calling process was made (vm_births), 0 when not known.
 * Another process's birth at that address is a VM freed since, whose entry
 * user space has not pruned yet: not this one's.
 */
static __always_inline __u64 vm_born(__u64 kvm)
{
	struct kvmmmu_vm_birth *b = kvm ? bpf_map_lookup_elem(&vm_births, &kvm) : NULL;

	return b && b->tgid == bpf_get_current_pid_tgid() >> 32 ? b->born_ns : 0;
}

/* Fills ID for the current thread. */
static __always_inline void thread_id_init(struct kvmmmu_thread_id *id)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);
	struct kvm_vcpu *vcpu = current_vcpu();

	id->vcpu_id = vcpu ? BPF_CORE_READ(vcpu, vcpu_id) : -1;
	id->kvm = vcpu ? (__u64)BPF_CORE_READ(vcpu, kvm) : 0;
	id->kvm_born = vm_born(id->kvm);
	bpf_get_current_comm(id->comm, sizeof(id->comm));
	bpf_core_read_str(id->process, sizeof(id->process), &leader->comm);
}

/*
 * The calling thread's entry in MAP (keyed by struct kvmmmu_thread_key, with
 * a struct kvmmmu_thread_id first in the value), created on its first event
 * from ZERO, a one-entry array that is never written: the id is filled in
 * the map entry itself, so no other thread's id can leak into it (a per-CPU
 * template could be rewritten by a program that preempted this one). A new
 * thread is announced on NEWS, so that user space names it (and reads /proc
 * and KVM's stats fds) while it is alive; with FIRST_OF_PROCESS only when
 * its process is new to every map (the objects other than the faults one:
 * their threads need no vCPU, their processes a name). NULL when its process is not in
 * TRACED (the pid filter, or NULL for none): such threads get no entry at
 * all. NULL also when the map is full (counted in HEALTH).
 */
/* include/uapi/asm-generic/errno-base.h */
#define ENOENT 2
#define EFAULT 14
#define PF_KTHREAD 0x00200000 /* include/linux/sched.h, the same since 2.6 */

static __always_inline void *thread_entry(void *map, void *zero, void *traced, void *news,
					  bool first_of_process, struct kvmmmu_health *health)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct kvmmmu_thread_key key = {.tgid = id >> 32, .tid = (__u32)id};
	struct kvmmmu_thread_id *t = bpf_map_lookup_elem(map, &key);
	struct kvmmmu_thread_news *ev;
	struct task_struct *task;
	__u32 idx = 0;
	__u8 one = 1;
	void *blank;
	int err;

	if (t)
		return t->ready ? t : NULL;
	if (traced && !bpf_map_lookup_elem(traced, &key.tgid))
		return NULL;
	/*
	 * Past exit_files(), its exit has been announced: what it does now (the
	 * VM torn down as its last file closes) must not make an entry that no
	 * exit would ever free, nor name a process user space has let go.
	 */
	task = (void *)bpf_get_current_task();
	if (!BPF_CORE_READ(task, files))
		return NULL;
	/*
	 * A kernel thread is no VM: kswapd, khugepaged, ksmd and 6.1's
	 * kvm-nx-lpage-recovery zap a VM's SPTEs for it, and the events name
	 * no VM (no kvm argument) to give them to. (Later kernels' NX recovery
	 * is a vhost_task in the VMM's own thread group: it gets an entry, and
	 * its mmu_lock waits count outside faults.)
	 */
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD)
		return NULL;
	blank = bpf_map_lookup_elem(zero, &idx);
	if (!blank)
		return NULL;
	err = bpf_map_update_elem(map, &key, blank, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: a nested program created it */) {
		__sync_fetch_and_add(&health->drops, 1);
		return NULL;
	}
	t = bpf_map_lookup_elem(map, &key);
	if (!t)
		return NULL;
	if (!err) {
		thread_id_init(t);
		t->ready = 1;
		if (first_of_process && bpf_map_lookup_elem(&seen_procs, &key.tgid))
			return t;
		bpf_map_update_elem(&seen_procs, &key.tgid, &one, BPF_ANY);
		ev = bpf_ringbuf_reserve(news, sizeof(*ev), 0);
		if (ev) {
			ev->key = key;
			ev->kind = first_of_process ? KVMMMU_THREAD_NEW_PROCESS : KVMMMU_THREAD_NEW;
			ev->group_dead = 0;
			ev->id = *t;
			bpf_ringbuf_submit(ev, 0);
		} else {
			__sync_fetch_and_add(&health->news_lost, 1);
		}
	}
	return t->ready ? t : NULL;
}

/*
 * A tracepoint handler twice: tp_btf (typed, cheapest) and raw_tp (for kernels
 * without BTF for it), each with its body: a tp_btf program may load through
 * its typed pointers.
 */
#define TP_PAIR_TYPED(event, btf_body_call, raw_body_call, ...)                                    \
	SEC("tp_btf/" #event)                                                                      \
	int BPF_PROG(event##_btf, ##__VA_ARGS__)                                                   \
	{                                                                                          \
		return btf_body_call;                                                              \
	}                                                                                          \
	SEC("raw_tp/" #event)                                                                      \
	int BPF_PROG(event##_raw, ##__VA_ARGS__)                                                   \
	{                                                                                          \
		return raw_body_call;                                                              \
	}

/* The same, one body for both. */
#define TP_PAIR(event, body_call, ...) TP_PAIR_TYPED(event, body_call, body_call, ##__VA_ARGS__)

/* The same, for tracepoints whose arguments the body does not read (and which vary by kernel). */
#define TP_PAIR_NO_ARGS(event, body_call)                                                          \
	SEC("tp_btf/" #event)                                                                      \
	int event##_btf(u64 *ctx)                                                                  \
	{                                                                                          \
		return body_call;                                                                  \
	}                                                                                          \
	SEC("raw_tp/" #event)                                                                      \
	int event##_raw(u64 *ctx)                                                                  \
	{                                                                                          \
		return body_call;                                                                  \
	}

#ifdef KVMMMU_FSESSION
/*
 * fsession (7.0): one program a function, run at its entry and again at its
 * exit, one link for both. Built only into faults_session.bpf.o: these
 * kfuncs took no argument before 7.0 (kprobe sessions, 6.10), and libbpf 1.1
 * refuses a whole object whose kfunc prototypes the kernel does not match.
 * libbpf 1.1 has no "fsession/" section: user space sets the attach type.
 */
extern bool bpf_session_is_return(void *ctx) __ksym;
#define FSESSION_PROG(func, entry_call, exit_call, ...)                                            \
	SEC("fentry/" #func)                                                                       \
	int BPF_PROG(func##_fsession, ##__VA_ARGS__)                                               \
	{                                                                                          \
		return bpf_session_is_return(ctx) ? (exit_call) : (entry_call);                    \
	}
#else
#define FSESSION_PROG(func, entry_call, exit_call, ...)
#endif

/*
 * A function's entry and exit, every way user space may choose to have
 * them (fsession, fentry/fexit, or kprobe/kretprobe); the entry's arguments
 * named after the calls (FUNC_PAIR: none): typed pointers in FENTRY_CALL,
 * numbers in KPROBE_CALL; the exit reads none.
 */
#define FUNC_PAIR_ARGS_TYPED(func, fentry_call, kprobe_call, exit_call, ...)                       \
	FSESSION_PROG(func, fentry_call, exit_call, ##__VA_ARGS__)                                 \
	SEC("fentry/" #func)                                                                       \
	int BPF_PROG(func##_fentry, ##__VA_ARGS__)                                                 \
	{                                                                                          \
		return fentry_call;                                                                \
	}                                                                                          \
	SEC("fexit/" #func)                                                                        \
	int BPF_PROG(func##_fexit)                                                                 \
	{                                                                                          \
		return exit_call;                                                                  \
	}                                                                                          \
	SEC("kprobe/" #func)                                                                       \
	int BPF_KPROBE(func##_kprobe, ##__VA_ARGS__)                                               \
	{                                                                                          \
		return kprobe_call;                                                                \
	}                                                                                          \
	SEC("kretprobe/" #func)                                                                    \
	int BPF_KRETPROBE(func##_kretprobe)                                                        \
	{                                                                                          \
		return exit_call;                                                                  \
	}

/* The same, one entry body for both (FENTRY_CALL's arguments then read as numbers). */
#define FUNC_PAIR_ARGS(func, entry_call, exit_call, ...)                                           \
	FUNC_PAIR_ARGS_TYPED(func, entry_call, entry_call, exit_call, ##__VA_ARGS__)

#define FUNC_PAIR(func, entry_call, exit_call) FUNC_PAIR_ARGS(func, entry_call, exit_call)

/* A function's entry alone, both ways, its arguments named after CALL. */
#define FUNC_ENTRY(func, call, ...)                                                                \
	SEC("fentry/" #func)                                                                       \
	int BPF_PROG(func##_fentry, ##__VA_ARGS__)                                                 \
	{                                                                                          \
		return call;                                                                       \
	}                                                                                          \
	SEC("kprobe/" #func)                                                                       \
	int BPF_KPROBE(func##_kprobe, ##__VA_ARGS__)                                               \
	{                                                                                          \
		return call;                                                                       \
	}

/* A kprobe and its kretprobe, for functions only kprobes reach here. */
#define KPROBE_PAIR(func, entry_call, exit_call, ...)                                              \
	SEC("kprobe/" #func)                                                                       \
	int BPF_KPROBE(func##_kprobe, ##__VA_ARGS__)                                               \
	{                                                                                          \
		return entry_call;                                                                 \
	}                                                                                          \
	SEC("kretprobe/" #func)                                                                    \
	int BPF_KRETPROBE(func##_kretprobe)                                                        \
	{                                                                                          \
		return exit_call;                                                                  \
	}

#endif
