/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's own statistics of one VM and its vCPUs (src/trace/vm_stats_fds.c
 * reads them from the VMM's stats fds): values, the baselines tracing
 * started from, and the mark an interval starts at. Copies in a snapshot
 * hold no fds.
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
	double read_at;		       /* ... and its last full read of them */
	long long open_fds;	       /* how many the VMM had open then (0: not told) */
	/*
	 * The VMM's own VM and vCPU fds at the last look. None, and its VM is
	 * gone (or going) while the process lives on: only our duplicated
	 * stats fds would keep it alive (vm_stats_update() lets them go).
	 */
	size_t vmm_refs;
	double refs_gone_at; /* monotonic seconds: since when it has held none (0: it holds some) */
};

/* A statistic since tracing started: vCPU VCPU, or the VM when vcpu < 0. */
int vm_stats_get(const struct vm_stats *v, int vcpu, const char *name, uint64_t *value);
/* A vCPU statistic summed over the VM's vCPUs since tracing started. */
int vm_stats_sum(const struct vm_stats *v, const char *name, uint64_t *value);
/* The current values (as last refreshed) become the mark: where an interval starts. */
void vm_stats_mark(struct vm_stats *v);
/* The same as vm_stats_get() and vm_stats_sum(), since the mark (or the start, before one). */
int vm_stats_get_since_mark(const struct vm_stats *v, int vcpu, const char *name, uint64_t *value);
int vm_stats_sum_since_mark(const struct vm_stats *v, const char *name, uint64_t *value);
/* PID exited before its stats could be taken: V says so (missed), for the renderers. */
void vm_stats_missed(struct vm_stats *v, int pid);
/* Descriptors V holds open. */
size_t vm_stats_fds(const struct vm_stats *v);
/* A copy of SRC's values, baselines and marks, without fds (frozen): for snapshots. */
int vm_stats_copy(struct vm_stats *dst, const struct vm_stats *src);
void vm_stats_close(struct vm_stats *v);

#endif
