/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's own counters of every VM a session shows, read through the VMMs'
 * stats fds (vm_stats_fds.h): taken at a VM's first sighting while it
 * runs, looked at again for stats fds opened since, frozen with their
 * final values once the VMM is gone, within the descriptors allowed.
 */
#ifndef KVMMMU_KVM_COUNTS_H
#define KVMMMU_KVM_COUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "threads.h"
#include "vm_stats_fds.h"

struct kvm_counts {
	struct vm_stats *v; /* per VM seen: exited ones frozen, without fds */
	size_t n, cap;
	unsigned long long start_ticks; /* the session's start, in clock ticks since boot */
	bool quiet;			/* the caller says why they cannot be read (err) */
	int err;			/* why KVM's counters cannot be read, reported once */
	bool fd_note;			/* out of fds for them, reported once */
	bool refresh_note;		/* a reading of them failed, reported once */
};

/* Starts counting: the fd limit raised to its hard limit; QUIET: no notes (the caller's). */
void kvm_counts_init(struct kvm_counts *k, bool quiet);
/*
 * Those seen before: new vCPU stats fds, or frozen once gone; then PIDS (N),
 * first seen now. THREADS tells how many VMs each process holds: for
 * several, no fds are taken (whose VM a stats fd is, is not told yet).
 */
void kvm_counts_tick(struct kvm_counts *k, const struct threads *threads, const int *pids,
		     size_t n);
/* The current values become each VM's baseline (those that count from zero stay so). */
void kvm_counts_rebase(struct kvm_counts *k);
/* Reads every live VM's values again (a failure makes that VM's unavailable, noted once). */
void kvm_counts_refresh(struct kvm_counts *k);
/* The current values become the mark: intervals start here. */
void kvm_counts_mark(struct kvm_counts *k);
/* The counters of PID, or NULL. */
struct vm_stats *kvm_counts_of(struct kvm_counts *k, int pid);
/* PID's go (it exited and was reported). */
void kvm_counts_forget(struct kvm_counts *k, int pid);
void kvm_counts_close(struct kvm_counts *k);

#endif
