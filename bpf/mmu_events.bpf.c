// SPDX-License-Identifier: GPL-2.0
/*
 * MMU lifecycle and dirty logging: shadow pages created, reused, zapped and
 * (un)synced, huge page splits, fast zaps, per thread; and a timeline of the
 * rare events that reshape the MMU (memslot changes, dirty logging turned on
 * and off, dirty-log fetches), each with the time the kernel took and the
 * faults the VM had taken so far, so that the storm after each fetch shows.
 *
 * Memslot and dirty-log changes have no tracepoint of their own: they are
 * the VMM's ioctls, seen through the syscalls tracepoints.
 */
#include "kvmmmu_core.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "kvmmmu.h"
#include "kvmmmu_maps.bpf.h" /* before the helpers, which use its maps */
#include "kvmmmu.bpf.h"
#include "core_fixes.bpf.h"

/* include/uapi/linux/kvm.h: KVMIO is 0xAE; sizes are of the argument structs */
#define KVM_IOW(nr, size) ((1U << 30) | ((size) << 16) | (0xAEU << 8) | (nr))
#define KVM_IOWR(nr, size) ((3U << 30) | ((size) << 16) | (0xAEU << 8) | (nr))
#define KVM_SET_USER_MEMORY_REGION KVM_IOW(0x46, 32)
#define KVM_SET_USER_MEMORY_REGION2 KVM_IOW(0x49, 160) /* 6.8+ */
#define KVM_GET_DIRTY_LOG KVM_IOW(0x42, 16)
#define KVM_CLEAR_DIRTY_LOG KVM_IOWR(0xc0, 24)
#define KVM_CREATE_VM ((0xAEU << 8) | 0x01) /* _IO(KVMIO, 0x01), on /dev/kvm */

KVMMMU_THREAD_MAP(mmu_stats, struct kvmmmu_mmu_stats);
KVMMMU_BLANK_THREAD(blank_thread, struct kvmmmu_mmu_stats);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024); /* 4096 events between two polls */
} events SEC(".maps");

/* A KVM ioctl in progress, per thread. */
struct ioctl_call {
	__u64 ts;
	__u32 cmd;
	__u32 slot;
	__u32 flags;
	__u32 old;	 /* SLOT_* below: the memslot as the kernel had it before the call */
	__u32 old_flags; /* ... its flags, with SLOT_EXISTS */
	__u32 pad;
	__u64 gpa, size;
	__u64 kvm; /* the VM the call is for (its fd's struct kvm), 0: not readable */
	__u64 kvm_born;
};

#define SLOT_UNKNOWN 0 /* not read from the kernel: the flags we saw set last decide */
#define SLOT_ABSENT 1  /* no such memslot yet: the call creates it */
#define SLOT_EXISTS 2

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ioctl_call);
} calls SEC(".maps");

struct slot_key {
	__u32 tgid;
	__u32 slot;	/* address space << 16 | slot, as the ioctl has it */
	__u64 kvm;	/* the VM (struct kvm and birth): a process's VMs have slots of the */
	__u64 kvm_born; /* same ids, and a VM may be made at a freed one's address */
};

/* The flags each memslot was last given, to tell dirty logging on from off. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct slot_key);
	__type(value, __u32);
} slot_flags SEC(".maps");

static __always_inline struct kvmmmu_mmu_stats *thread(void)
{
	return thread_entry(&mmu_stats, &blank_thread, filter_pids ? &traced_pids : NULL,
			    &thread_news, true, &health);
}

static __always_inline int count(enum kvmmmu_mmu_counter c)
{
	struct kvmmmu_mmu_stats *s = thread();

	if (s && c < KVMMMU_N_MMU_COUNTERS)
		s->counters[c]++;
	return 0;
}

static __always_inline int on_get_page(bool created)
{
	return count(created ? KVMMMU_SHADOW_PAGES_CREATED : KVMMMU_SHADOW_PAGES_REUSED);
}
TP_PAIR(kvm_mmu_get_page, on_get_page(created), void *sp, bool created)
TP_PAIR(kvm_mmu_prepare_zap_page, count(KVMMMU_SHADOW_PAGES_ZAPPED), void *sp)
TP_PAIR(kvm_mmu_sync_page, count(KVMMMU_SHADOW_PAGES_SYNCED), void *sp)
TP_PAIR(kvm_mmu_unsync_page, count(KVMMMU_SHADOW_PAGES_UNSYNCED), void *sp)
TP_PAIR(kvm_mmu_split_huge_page, count(KVMMMU_HUGE_PAGE_SPLITS), u64 gfn, u64 spte, int level,
	int errno)

struct sum_ctx {
	__u32 tgid;
	__u64 kvm, kvm_born;
	__u64 faults;
};

static long add_faults(void *map, struct kvmmmu_thread_key *key, struct kvmmmu_thread_stats *s,
		       struct sum_ctx *ctx)
{
	if (key->tgid == ctx->tgid &&
	    (!ctx->kvm || (s->id.kvm == ctx->kvm && s->id.kvm_born == ctx->kvm_born)))
		ctx->faults += s->counters[KVMMMU_FAULTS];
	return 0;
}

/*
 * Faults the VM (KVM, made at KVM_BORN) of process TGID has taken so far
 * (KVM 0: the process's), as the faults object counts them.
 */
static __always_inline __u64 faults_so_far(__u32 tgid, __u64 kvm, __u64 kvm_born)
{
	struct sum_ctx ctx = {.tgid = tgid, .kvm = kvm, .kvm_born = kvm_born};

	bpf_for_each_map_elem(&thread_stats, add_faults, &ctx, 0);
	return ctx.faults;
}

/*
 * The VM's timeline events so far, this one counted (0: VM not known).
 * --metric regions counts the faults between two of its events apart
 * (struct kvmmmu_region_key), so that each event's storm has its regions.
 * A VM made before tracing started is noted here, born 0 as vm_born() says.
 */
static __always_inline __u32 next_epoch(__u32 tgid, __u64 kvm, __u64 kvm_born)
{
	struct kvmmmu_vm_birth *b, fresh = {.born_ns = kvm_born, .tgid = tgid};

	if (!kvm)
		return 0;
	b = bpf_map_lookup_elem(&vm_births, &kvm);
	if (!b && !kvm_born) {
		bpf_map_update_elem(&vm_births, &kvm, &fresh, BPF_NOEXIST);
		b = bpf_map_lookup_elem(&vm_births, &kvm);
	}
	if (!b || b->tgid != tgid || b->born_ns != kvm_born)
		return 0;
	/* one VM's ioctls rarely race; when they do, both events may read the later epoch */
	__sync_fetch_and_add(&b->epoch, 1);
	return b->epoch;
}

static __always_inline void emit(__u32 kind, const struct ioctl_call *c, __u64 now, long ret,
				 __u64 kvm, __u64 kvm_born)
{
	__u64 id = bpf_get_current_pid_tgid();
	/*
	 * The faults so far, then the next epoch, before the record: a fault
	 * between the two is in this event's storm but not in its count, and
	 * records of one VM mostly come in their epochs' order.
	 */
	__u64 faults = faults_so_far(id >> 32, kvm, kvm_born);
	__u32 epoch = next_epoch(id >> 32, kvm, kvm_born);
	struct kvmmmu_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&health.timeline_lost, 1);
		return;
	}
	e->ts_ns = now;
	e->duration_ns = c ? now - c->ts : 0;
	e->tgid = id >> 32;
	e->tid = (__u32)id;
	e->kind = kind;
	e->slot = c ? c->slot : 0;
	e->gpa = c ? c->gpa : 0;
	e->size = c ? c->size : 0;
	e->ret = (__s32)ret;
	e->kvm = kvm;
	e->kvm_born = kvm_born;
	e->faults = faults;
	e->epoch = epoch;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int on_zap_all_fast(void *kvm)
{
	struct kvmmmu_mmu_stats *s = thread();

	if (!s)
		return 0;
	s->counters[KVMMMU_ZAP_ALL_FAST]++;
	emit(KVMMMU_EV_ZAP_ALL_FAST, NULL, bpf_ktime_get_ns(), 0, (__u64)kvm, vm_born((__u64)kvm));
	return 0;
}
TP_PAIR(kvm_mmu_zap_all_fast, on_zap_all_fast(kvm), void *kvm)

/*
 * MMU roots: kvm_mmu_load() allocates them when a vCPU enters the guest
 * with none valid (first run, CR3/role changes, after a fast zap), which is
 * the reload cost the seeds' root-reload patches are about.
 */
static __always_inline int on_root_load_entry(void)
{
	struct kvmmmu_mmu_stats *s = thread();

	if (s)
		s->root_load_ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_root_load_exit(void)
{
	struct kvmmmu_mmu_stats *s = thread();

	if (!s || !s->root_load_ts)
		return 0;
	s->counters[KVMMMU_ROOT_LOADS]++;
	s->root_load_ns += bpf_ktime_get_ns() - s->root_load_ts;
	s->root_load_ts = 0;
	return 0;
}

FUNC_PAIR(kvm_mmu_load, on_root_load_entry(), on_root_load_exit())

/* KVM_MMU_ROOT_CURRENT and the KVM_MMU_NUM_PREV_ROOTS (3) previous roots */
#define EVERY_ROOT 0xfUL

/*
 * An unload: every root of the vCPU's own MMU freed at once. Counted in
 * kvm_mmu_free_roots(), not kvm_mmu_unload(), which 6.1 and 6.12 inline into
 * kvm_mmu_reset_context() (the role changes the roots seed is about), so its
 * probe saw none of those. The nested guest_mmu's roots are not the vCPU's.
 */
static __always_inline int on_free_roots(void *mmu, unsigned long roots)
{
	struct kvm_vcpu *vcpu;

	if ((roots & EVERY_ROOT) != EVERY_ROOT)
		return 0;
	vcpu = current_vcpu();
	if (!vcpu || mmu != (void *)vcpu + bpf_core_field_offset(struct kvm_vcpu, arch) +
				     bpf_core_field_offset(struct kvm_vcpu_arch, root_mmu))
		return 0;
	return count(KVMMMU_ROOT_UNLOADS);
}

FUNC_ENTRY(kvm_mmu_free_roots, on_free_roots(mmu, roots), void *kvm, void *mmu, unsigned long roots)

/* The first fields of kvm_userspace_memory_region(2) and of kvm_(clear_)dirty_log. */
struct memory_region_head {
	__u32 slot;
	__u32 flags;
	__u64 guest_phys_addr;
	__u64 memory_size;
};

#define SLOT_CHAIN_MAX 8 /* id_hash has 128 buckets: a VM's 500-odd slots, a few each */

/*
 * The VM of the calling process's fd VM_FD (a VM fd's file->private_data is
 * its struct kvm), or NULL where it cannot be read.
 */
static __always_inline struct kvm *fd_vm(int vm_fd)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct file *file = NULL;
	struct fdtable *fdt;

	if (vm_fd < 0)
		return NULL;
	fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || (unsigned int)vm_fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	if (bpf_probe_read_kernel(&file, sizeof(file), BPF_CORE_READ(fdt, fd) + vm_fd) || !file)
		return NULL;
	return BPF_CORE_READ(file, private_data);
}

/*
 * The memslot SLOT (address space << 16 | id, as the ioctl has it) of KVM,
 * as the kernel has it now: SLOT_EXISTS with its flags,
 * SLOT_ABSENT, or SLOT_UNKNOWN where this kernel cannot be read that way
 * (before 5.17's id_hash, or a chain longer than we follow). So dirty logging
 * turned on for a VM that ran before kvmmmu attached (a live migration's
 * start) is told from a memslot created, and two VMs of one VMM never mix.
 */
static __always_inline __u32 kernel_memslot(struct kvm *kvm, __u32 slot, __u32 *flags)
{
	struct kvm_memslots *slots = NULL;
	struct hlist_node *node = NULL;
	__u32 id = slot & 0xffff, as_id = slot >> 16, h, node_off;
	int node_idx;

	if (!kvm_has_memslot_id_hash() || as_id > 1)
		return SLOT_UNKNOWN;
	if (!kvm ||
	    bpf_probe_read_kernel(&slots, sizeof(slots),
				  (void *)kvm + bpf_core_field_offset(kvm->memslots) +
					  as_id * sizeof(slots)) ||
	    !slots)
		return SLOT_UNKNOWN;
	node_idx = BPF_CORE_READ(slots, node_idx);
	/* hash_min(id, 7): hash_32(), the golden-ratio multiply */
	h = (id * 0x61C88647U) >> (32 - 7);
	if (bpf_probe_read_kernel(&node, sizeof(node),
				  (void *)slots + bpf_core_field_offset(slots->id_hash) +
					  h * bpf_core_type_size(struct hlist_head)))
		return SLOT_UNKNOWN;
	/* the kernel's sizes: this file's hlist_node declares only the member it reads */
	node_off = bpf_core_field_offset(struct kvm_memory_slot, id_node) +
		   (node_idx & 1) * bpf_core_type_size(struct hlist_node);
	for (int i = 0; i < SLOT_CHAIN_MAX; i++) {
		struct kvm_memory_slot *m = (void *)node - node_off;

		if (!node)
			return SLOT_ABSENT;
		if ((__u16)BPF_CORE_READ(m, id) == id) {
			*flags = BPF_CORE_READ(m, flags);
			return SLOT_EXISTS;
		}
		node = BPF_CORE_READ(node, next);
	}
	return SLOT_UNKNOWN;
}

/*
 * The syscalls tracepoints' records are the kernel's struct syscall_trace_enter
 * and syscall_trace_exit (kernel/trace/trace_syscalls.c), read through CO-RE:
 * ioctl(fd, cmd, arg) is args[0..2].
 */
SEC("tracepoint/syscalls/sys_enter_ioctl")
int sys_enter_ioctl(struct syscall_trace_enter *ctx)
{
	__u32 cmd = (__u32)ctx->args[1], tid = (__u32)bpf_get_current_pid_tgid();
	void *arg = (void *)ctx->args[2];
	struct memory_region_head r = {};
	struct ioctl_call c = {};

	if (cmd == KVM_CREATE_VM) { /* its birth is noted at its return */
		c.cmd = cmd;
		if (bpf_map_update_elem(&calls, &tid, &c, BPF_ANY))
			__sync_fetch_and_add(&health.calls_full, 1);
		return 0;
	}
	if (cmd != KVM_SET_USER_MEMORY_REGION && cmd != KVM_SET_USER_MEMORY_REGION2 &&
	    cmd != KVM_GET_DIRTY_LOG && cmd != KVM_CLEAR_DIRTY_LOG)
		return 0;
	/* an unreadable argument fails the ioctl itself (EFAULT): nothing to follow */
	if (bpf_probe_read_user(&r, cmd == KVM_GET_DIRTY_LOG ? sizeof(__u32) * 2 : sizeof(r), arg))
		return 0;
	c.ts = bpf_ktime_get_ns();
	c.cmd = cmd;
	c.slot = r.slot;
	/* these four are VM ioctls: the fd is a VM's */
	c.kvm = (__u64)fd_vm((int)ctx->args[0]);
	c.kvm_born = vm_born(c.kvm);
	if (cmd == KVM_SET_USER_MEMORY_REGION || cmd == KVM_SET_USER_MEMORY_REGION2) {
		c.flags = r.flags;
		c.gpa = r.guest_phys_addr;
		c.size = r.memory_size;
		c.old = kernel_memslot((struct kvm *)c.kvm, r.slot, &c.old_flags);
	}
	if (bpf_map_update_elem(&calls, &tid, &c, BPF_ANY))
		__sync_fetch_and_add(&health.calls_full, 1);
	return 0;
}

static __always_inline void memslot_done(struct kvmmmu_mmu_stats *s, struct ioctl_call *c,
					 __u64 now, long ret)
{
	struct slot_key key = {.tgid = bpf_get_current_pid_tgid() >> 32,
			       .slot = c->slot,
			       .kvm = c->kvm,
			       .kvm_born = c->kvm_born};
	__u32 *old = bpf_map_lookup_elem(&slot_flags, &key), kind;
	bool dirty = c->flags & KVMMMU_MEM_LOG_DIRTY_PAGES;
	bool was_dirty;

	/* the kernel's own memslot, where it could be read; else what we saw set last */
	if (c->old == SLOT_EXISTS)
		old = &c->old_flags;
	else if (c->old == SLOT_ABSENT)
		old = NULL;
	was_dirty = old && (*old & KVMMMU_MEM_LOG_DIRTY_PAGES);

	s->counters[KVMMMU_MEMSLOT_UPDATES]++;
	if (ret)
		return; /* refused: nothing changed */
	if (!c->size) {
		kind = KVMMMU_EV_MEMSLOT_DELETE;
		bpf_map_delete_elem(&slot_flags, &key);
	} else {
		/* user space prunes a VM's slots when it exits; full means too many VMs at once */
		if (bpf_map_update_elem(&slot_flags, &key, &c->flags, BPF_ANY))
			__sync_fetch_and_add(&health.slots_full, 1);
		if (!old)
			kind = KVMMMU_EV_MEMSLOT_CREATE;
		else if (dirty && !was_dirty)
			kind = KVMMMU_EV_DIRTY_LOG_ON;
		else if (!dirty && was_dirty)
			kind = KVMMMU_EV_DIRTY_LOG_OFF;
		else
			kind = KVMMMU_EV_MEMSLOT_UPDATE;
	}
	if (kind == KVMMMU_EV_DIRTY_LOG_ON) {
		s->counters[KVMMMU_DIRTY_LOG_ENABLES]++;
		s->enable_ns += now - c->ts;
	} else if (kind == KVMMMU_EV_DIRTY_LOG_OFF) {
		s->counters[KVMMMU_DIRTY_LOG_DISABLES]++;
		s->disable_ns += now - c->ts;
	}
	emit(kind, c, now, ret, c->kvm, c->kvm_born);
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int sys_exit_ioctl(struct syscall_trace_exit *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ioctl_call *c = bpf_map_lookup_elem(&calls, &tid);
	struct kvmmmu_mmu_stats *s;
	__u64 now;

	if (!c)
		return 0;
	now = bpf_ktime_get_ns();
	if (c->cmd == KVM_CREATE_VM) {
		/* the new VM's fd: its struct kvm may be at a freed VM's address */
		__u64 kvm = ctx->ret >= 0 ? (__u64)fd_vm((int)ctx->ret) : 0;
		struct kvmmmu_vm_birth b = {.born_ns = now,
					    .tgid = bpf_get_current_pid_tgid() >> 32};

		/* a process not traced is never pruned from the map: not noted at all */
		if (kvm && (!filter_pids || bpf_map_lookup_elem(&traced_pids, &b.tgid)))
			bpf_map_update_elem(&vm_births, &kvm, &b, BPF_ANY);
		bpf_map_delete_elem(&calls, &tid);
		return 0;
	}
	s = thread();
	if (s) {
		/*
		 * A thread that is no vCPU (the VMM's main loop) belongs to the
		 * first VM it changes. Its counters are per thread: a later VM's
		 * calls are counted with the first, and that is said.
		 */
		if (!s->id.kvm) {
			s->id.kvm_born = c->kvm_born;
			s->id.kvm = c->kvm;
		} else if (c->kvm && (s->id.kvm != c->kvm || s->id.kvm_born != c->kvm_born)) {
			__sync_fetch_and_add(&health.vm_switches, 1);
		}
		if (c->cmd == KVM_GET_DIRTY_LOG) {
			s->counters[KVMMMU_DIRTY_LOG_GETS]++;
			s->get_ns += now - c->ts;
			emit(KVMMMU_EV_GET_DIRTY_LOG, c, now, ctx->ret, c->kvm, c->kvm_born);
		} else if (c->cmd == KVM_CLEAR_DIRTY_LOG) {
			s->counters[KVMMMU_DIRTY_LOG_CLEARS]++;
			s->clear_ns += now - c->ts;
			emit(KVMMMU_EV_CLEAR_DIRTY_LOG, c, now, ctx->ret, c->kvm, c->kvm_born);
		} else {
			memslot_done(s, c, now, ctx->ret);
		}
	}
	bpf_map_delete_elem(&calls, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
