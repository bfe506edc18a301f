// SPDX-License-Identifier: GPL-2.0
/* Baselines for the per-event cost of a tp_btf program on kvm_mmu_set_spte (and contention_begin).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* (CO-RE: libbpf relocates the field against the running kernel's BTF) */
struct task_struct {
	int pid;
} __attribute__((preserve_access_index));
struct key {
	__u32 tgid, tid;
};
struct val {
	__u64 n, ts, pad[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pcpu SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct key);
	__type(value, struct val);
} by_tid SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct val);
} by_task SEC(".maps");
static struct val zero;

/* Dispatch and statistics only. */
SEC("tp_btf/kvm_mmu_set_spte")
int triv_empty(void *ctx)
{
	return 0;
}

/* Dispatch and statistics only, on every contended lock of the system (bench phase 5). */
SEC("tp_btf/contention_begin")
int triv_empty_lock(void *ctx)
{
	return 0;
}

/* One counter increment in a per-CPU map: the "trivial program" baseline. */
SEC("tp_btf/kvm_mmu_set_spte")
int triv_pcpu_inc(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&pcpu, &k);

	if (v)
		(*v)++;
	return 0;
}

/* kvmmmu's pattern: the calling thread's entry in a hash keyed by (tgid, tid). */
static __always_inline struct val *by_thread(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct key k = {.tgid = id >> 32, .tid = (__u32)id};
	struct val *v = bpf_map_lookup_elem(&by_tid, &k);

	if (!v) {
		bpf_map_update_elem(&by_tid, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&by_tid, &k);
	}
	return v;
}

SEC("tp_btf/kvm_mmu_set_spte")
int triv_hash_tid(void *ctx)
{
	struct val *v = by_thread();

	if (v)
		v->n++;
	return 0;
}

SEC("tp_btf/kvm_mmu_set_spte")
int triv_hash_ktime(void *ctx)
{
	struct val *v = by_thread();

	if (v) {
		v->n++;
		v->ts = bpf_ktime_get_ns();
	}
	return 0;
}

/* The same per-thread entry in task-local storage instead of a hash. */
SEC("tp_btf/kvm_mmu_set_spte")
int triv_task_stg(void *ctx)
{
	struct val *v = bpf_task_storage_get(&by_task, bpf_get_current_task_btf(), 0,
					     BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (v)
		v->n++;
	return 0;
}

/*
 * One field of a kernel struct, two ways (kvmmmu reads the vCPU's MMU and
 * fast-path count so): through bpf_probe_read_kernel(), as a program whose
 * pointer is a plain number must (kprobes, raw_tp), and by a direct load,
 * as a program given a typed pointer may (tp_btf, fentry/fexit). Each gets
 * its task by one helper call (bpf_get_current_task(), or its _btf twin:
 * the same work), so their difference is the read.
 */
__u64 sink;

SEC("tp_btf/kvm_mmu_set_spte")
int triv_probe_read(void *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	int pid = 0;

	bpf_probe_read_kernel(&pid, sizeof(pid), &t->pid);
	sink += pid;
	return 0;
}

SEC("tp_btf/kvm_mmu_set_spte")
int triv_direct_load(void *ctx)
{
	sink += bpf_get_current_task_btf()->pid;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
