/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's own statistics for any VM, not only ours, through the VMM's binary
 * stats fds (anon_inode:kvm-vm-stats, anon_inode:kvm-vcpu-stats:N),
 * duplicated with pidfd_getfd() (root, Linux 5.6+). We cannot make new ones:
 * KVM refuses every ioctl, KVM_GET_STATS_FD included, from a process other
 * than the VM's creator (kvm->mm != current->mm gives -EIO), so a VMM must
 * have opened them: kvmmmu-load does, QEMU does once asked for statistics
 * per QMP query-stats, but QEMU 7.2 closes them again). Reading a stats fd has
 * no such check, and the fds keep the VM alive for reading, so the final
 * figures are there after the VMM exits.
 *
 * A VMM that holds none leaves KVM's debugfs directory of the VM (root,
 * debugfs not locked down): its VM statistics and its vCPU statistics summed
 * over the vCPUs, so VM-wide figures only, and read while the VM exists
 * (the last reading before it exits is the final one).
 */
#ifndef KVMMMU_VM_STATS_H
#define KVMMMU_VM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvm_stats.h"

#define VM_STATS_MAX_VCPUS 512

struct vcpu_stats {
	int vcpu;
	struct kvm_stats stats;
	uint64_t *baseline; /* values when tracing started; NULL: count from zero */
	uint64_t *mark;	    /* values at the last vm_stats_mark(); NULL: none yet */
};

struct vm_stats {
	int pid;
	bool have_vm;
	struct kvm_stats vm;
	uint64_t *vm_baseline;
	uint64_t *vm_mark;
	struct vcpu_stats *vcpus;
	size_t n_vcpus;
	bool from_zero; /* the VMM started after tracing: everything it counted is ours */
	bool vcpu_sums; /* from debugfs: vm holds the vCPU statistics summed, no vCPU has its own */
	bool frozen;	/* the VMM exited: final values read, fds closed */
	bool missed;	/* the VMM had exited when first looked at: KVM's counts were never read */
	/*
	 * The last reading failed (a VMM without stats fds: the VM's debugfs
	 * files go with it): what was read before is not its count, so every
	 * statistic is unavailable (-ESTALE) rather than an old value.
	 */
	bool stale;
	double first_scan, scanned_at; /* monotonic seconds: the caller's looks at its fds */
	/*
	 * The VMM's own VM and vCPU fds at the last look. None, and its VM is
	 * gone (or going) while the process lives on: only our duplicated
	 * stats fds would keep it alive (vm_stats_update() lets them go).
	 */
	size_t vmm_refs;
	double refs_gone_at; /* monotonic seconds: since when it has held none (0: it holds some) */
};

/* How long a live VMM holds none of its VM's fds before ours go too (seconds). */
#define VM_STATS_RELEASE_S 1.0

/*
 * Opens (or, called again, extends with new vCPUs) the stats of PID's VM.
 * FROM_ZERO: count from zero rather than from the values now. Once the VMM
 * has held none of its VM's fds for VM_STATS_RELEASE_S (it let the VM go
 * and lives on), the final values are read and our fds closed
 * (vm_stats_freeze()): a duplicated stats fd holds the whole VM. Returns -errno: -ENOENT no VM fds,
 * -EXDEV a VM without stats fds nor a readable debugfs directory, -EPERM not allowed to take its
 * fds.
 */
int vm_stats_update(struct vm_stats *v, int pid, bool from_zero);
int vm_stats_refresh(struct vm_stats *v);
/* Counts from now on: the current values become the baselines. */
int vm_stats_rebase(struct vm_stats *v);
/* A statistic since tracing started: vCPU VCPU, or the VM when vcpu < 0. */
int vm_stats_get(const struct vm_stats *v, int vcpu, const char *name, uint64_t *value);
/* A vCPU statistic summed over the VM's vCPUs since tracing started. */
int vm_stats_sum(const struct vm_stats *v, const char *name, uint64_t *value);
/* The current values (as last refreshed) become the mark: where an interval starts. */
void vm_stats_mark(struct vm_stats *v);
/* The same as vm_stats_get() and vm_stats_sum(), since the mark (or the start, before one). */
int vm_stats_get_since_mark(const struct vm_stats *v, int vcpu, const char *name, uint64_t *value);
int vm_stats_sum_since_mark(const struct vm_stats *v, const char *name, uint64_t *value);
/*
 * The VMM has exited: reads the final values once more and closes the fds,
 * keeping the values (a long run with VMs coming and going must not run out
 * of descriptors). Refreshing a frozen VM does nothing.
 */
void vm_stats_freeze(struct vm_stats *v);
/* PID exited before its stats could be taken: V says so (missed), for the renderers. */
void vm_stats_missed(struct vm_stats *v, int pid);
/* Descriptors V holds open. */
size_t vm_stats_fds(const struct vm_stats *v);
/* A copy of SRC's values, baselines and marks, without fds (frozen): for snapshots. */
int vm_stats_copy(struct vm_stats *dst, const struct vm_stats *src);
void vm_stats_close(struct vm_stats *v);

#endif
