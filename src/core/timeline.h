/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timeline: MMU lifecycle and dirty-log events of every traced VM, in
 * the order BPF reported them, each with the faults its VM took since its
 * previous event. Plain data, bounded by its owner's calls.
 */
#ifndef KVMMMU_TIMELINE_H
#define KVMMMU_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "kvmmmu.h"

/* Events kept (192 bytes each): past it, the oldest go (timeline_cap). */
#define TIMELINE_MAX_EVENTS 65536

/* The regions an event's storm is shown in: the most faulted. */
#define TIMELINE_STORM_REGIONS 3

/* A region of the guest's memory, and the faults in it between two events. */
struct storm_region {
	__u64 base; /* its first GPA (struct regions' size: how large) */
	__u64 faults;
	__s32 slot; /* the memslot's id; -1: not known (a fast-path fault) */
};

/* A timeline event, with wall-clock time and the faults since the VM's previous event. */
struct timeline_event {
	struct kvmmmu_event ev;
	int vm_index;	      /* which of process ev.tgid's VMs (1: its first) */
	double wall;	      /* seconds since the epoch */
	__u64 faults_between; /* faults since the previous event of the same VM */
	/*
	 * --metric regions: where those faults were, the most faulted regions
	 * first, and the faults of all regions (which can differ from
	 * faults_between by a fault in flight at the event, or one that
	 * requested no SPTE). storm_known: counted for this event.
	 */
	struct storm_region storm[TIMELINE_STORM_REGIONS];
	__u64 storm_faults;
	unsigned int n_storm;
	bool storm_known;
};

struct timeline {
	struct timeline_event *events;
	size_t n, cap;
	__u64 capped; /* events that went to keep it under TIMELINE_MAX_EVENTS */
};

/* Appends EV, of VM VM_INDEX of its process, at WALL seconds since the epoch; 0 or -ENOMEM. */
int timeline_append(struct timeline *t, const struct kvmmmu_event *ev, int vm_index, double wall);
/*
 * PID has exited and its last figures were reported: its events go.
 * Returns how many of them were among the first BEFORE (the caller's index
 * into the timeline moves back by as many).
 */
size_t timeline_forget(struct timeline *t, int pid, size_t before);
/*
 * The first BEFORE events go, but each VM's latest event (the next one's
 * faults_between counts from it). Returns how many went.
 */
size_t timeline_trim(struct timeline *t, size_t before);
/*
 * Past TIMELINE_MAX_EVENTS events, the oldest go (never a VM's latest)
 * until three quarters are left; *SEEN, the caller's index of events
 * already shown, moves back by the shown ones that went. Returns how many
 * went.
 */
size_t timeline_cap(struct timeline *t, size_t *seen);
void timeline_free(struct timeline *t);
/* "memslot_create", "dirty_log_on", ...: an event kind's name in every face. */
const char *timeline_kind_str(__u32 kind);

#endif
