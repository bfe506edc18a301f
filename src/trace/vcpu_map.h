/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which thread runs which vCPU, from /proc, for kernels where the BPF side
 * cannot read kvm_running_vcpu. Any VMM: a thread blocked in
 * ioctl(fd, KVM_RUN) whose fd is anon_inode:kvm-vcpu:N runs vCPU N. A busy
 * vCPU is never blocked, so the map is refreshed often and remembers what
 * it has seen; the VMMs' vCPU thread names are the last resort.
 */
#ifndef KVMMMU_VCPU_MAP_H
#define KVMMMU_VCPU_MAP_H

#include <stddef.h>

enum vcpu_source {
	VCPU_FROM_SYSCALL, /* blocked in KVM_RUN on a kvm-vcpu fd */
	VCPU_FROM_COMM,	   /* the VMM's thread name (vcpu_from_thread_name) */
};

struct vcpu_map_entry {
	int pid, tid, vcpu;
	enum vcpu_source source;
};

struct vcpu_map {
	struct vcpu_map_entry *e;
	size_t n, cap;
};

/*
 * The vCPU id a VMM's thread name gives: QEMU "CPU N/KVM", Firecracker
 * "fc_vcpu N", cloud-hypervisor "vcpuN", crosvm "crosvm_vcpuN"; else -1.
 */
int vcpu_from_thread_name(const char *comm);
/*
 * Scans PID's threads under PROC_ROOT and records what it finds; keeps
 * earlier findings. A QEMU thread name's cpu_index is translated to the
 * vCPU id KVM has (the APIC id), from the process's kvm-vcpu fds.
 */
#define VCPU_MAP_MAX_IDS 1024
int vcpu_map_scan(struct vcpu_map *m, const char *proc_root, int pid);
/* vCPU id of TID in PID, or -1. */
int vcpu_map_lookup(const struct vcpu_map *m, int pid, int tid);
/* vCPU ids PID has created (kvm-vcpu fds), into IDS (capacity MAX); returns the count. */
int vcpu_fds(const char *proc_root, int pid, int *ids, size_t max);
/* Drops PID's threads (an exited VM). */
void vcpu_map_forget(struct vcpu_map *m, int pid);
void vcpu_map_free(struct vcpu_map *m);

#endif
