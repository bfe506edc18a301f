/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps that kvmmmu's BPF objects share. Each object that includes this
 * declares its own copy; user space creates them once, in the faults object,
 * and hands their fds to the others (bpf_map__reuse_fd) before they load,
 * so that every object filters the same processes and sees the same threads.
 */
#ifndef KVMMMU_MAPS_BPF_H
#define KVMMMU_MAPS_BPF_H

/* Count only the processes in traced_pids (set by user space before load). */
const volatile bool filter_pids = false;

/* Drops and other health counters of this object, read by user space. */
struct kvmmmu_health health;

/*
 * A per-thread map: entries are allocated as threads appear, not all up
 * front, and freed by user space when they exit (after keeping their
 * figures). User space sets the size from the host's thread count.
 */
#define KVMMMU_THREAD_MAP(name, value_type)                                                        \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                              \
		__uint(max_entries, 4096);                                                         \
		__type(key, struct kvmmmu_thread_key);                                             \
		__type(value, value_type);                                                         \
	} name SEC(".maps")

/* The all-zero value thread_entry() creates a per-thread map's entries from; never written. */
#define KVMMMU_BLANK_THREAD(name, value_type)                                                      \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                                  \
		__uint(max_entries, 1);                                                            \
		__type(key, __u32);                                                                \
		__type(value, value_type);                                                         \
	} name SEC(".maps")

/* Threads' first events and exits (struct kvmmmu_thread_news), for user space to act at once. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024); /* 16384 records: a burst of VMs starting at once */
} thread_news SEC(".maps");

/* Processes that have an entry in some per-thread map: whose exits are news. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} seen_procs SEC(".maps");

/* Processes to count, when filter_pids is set (kvmmmu-hist -p PID, -- COMMAND). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} traced_pids SEC(".maps");

/* The traced VMs' mmu_lock addresses (struct kvmmmu_lock_table), mmap()ed by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct kvmmmu_lock_table);
} mmu_locks SEC(".maps");

/*
 * When each VM was made (struct kvm address -> bpf_ktime_get_ns() at
 * KVM_CREATE_VM's return, written by the MMU-lifecycle object), so that a
 * VM made at a freed one's address is another VM. LRU: user space deletes a
 * process's VMs when it exits; only a host making VMs faster than that
 * could push out a live one's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct kvmmmu_vm_birth);
} vm_births SEC(".maps");

/* Fault figures and state per thread (8 KiB each), written by the faults object. */
KVMMMU_THREAD_MAP(thread_stats, struct kvmmmu_thread_stats);

#endif
