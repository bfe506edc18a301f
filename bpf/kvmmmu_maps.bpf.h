/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps that kvmmmu's BPF objects share. Each object that includes this
 * declares its own copy; user space creates them once, in the faults object,
 * and hands their fds to the others (bpf_map__reuse_fd) before they load,
 * so that every object filters the same processes and sees the same threads.
 */
#ifndef KVMMMU_MAPS_BPF_H
#define KVMMMU_MAPS_BPF_H

/* Processes to count, when filter_pids is set (kvmmmu-hist -p PID, -- COMMAND). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} traced_pids SEC(".maps");

/*
 * Fault figures and state per thread, written by the faults object. Entries
 * are 8 KiB: allocated as threads appear, not 4096 of them up front.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct kvmmmu_thread_key);
	__type(value, struct kvmmmu_thread_stats);
} thread_stats SEC(".maps");

#endif
