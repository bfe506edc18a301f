/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector's second and third BPF objects: kvm->mmu_lock contention
 * (bpf/mmu_lock.bpf.c) and the MMU lifecycle with its dirty-log timeline
 * (bpf/mmu_events.bpf.c). They share the faults object's pid filter, thread
 * map and ring-buffer set: collector_open() opens them once the faults
 * object is attached, and the collector's calls read, trim and close them.
 */
#ifndef KVMMMU_MMU_EXTRAS_H
#define KVMMMU_MMU_EXTRAS_H

#include <stdbool.h>
#include <stddef.h>

#include "collector.h"
#include "kvmmmu.h"
#include "model.h"
#include "timeline.h"

struct mmu_lock_bpf;
struct mmu_events_bpf;
struct ring_buffer;

#define EXTRAS_MAX_PROBES 16
#define EXTRAS_MAX_LINKS 32

struct retired_lock {
	struct kvmmmu_thread_key key;
	struct kvmmmu_lock_stats stats;
};

struct retired_mmu {
	struct kvmmmu_thread_key key;
	struct kvmmmu_mmu_stats stats;
};

struct mmu_extras {
	struct mmu_lock_bpf *lock;
	struct mmu_events_bpf *events;
	struct ring_buffer *rb; /* the collector's ring-buffer set, not ours to free */
	struct collector *c;	/* attaches our programs (its kprobe events) */
	struct bpf_link *links[EXTRAS_MAX_LINKS];
	size_t n_links;
	struct probe_status probes[EXTRAS_MAX_PROBES];
	size_t n_probes;
	struct timeline timeline;
	double mono_to_wall;		   /* add to bpf_ktime_get_ns() seconds to get wall time */
	struct retired_lock *retired_lock; /* exited threads' last figures */
	size_t n_retired_lock, cap_retired_lock;
	struct retired_mmu *retired_mmu;
	size_t n_retired_mmu, cap_retired_mmu;
	bool lock_ok;	/* mmu_lock waits are measured */
	bool events_ok; /* lifecycle counters and the timeline work */
};

/*
 * Opens and attaches what this kernel allows, of the parts asked for (LOCK:
 * mmu_lock waits; EVENTS: lifecycle counters and the timeline); failures leave
 * the part off, with reasons.
 */
int mmu_extras_open(struct mmu_extras *x, struct collector *c, bool lock, bool events);
/* Moves ring-buffer events into the timeline (call every tick). */
void mmu_extras_poll(struct mmu_extras *x);
/* Adds lock and lifecycle figures to M (after collector_read). */
int mmu_extras_read(struct mmu_extras *x, struct collector *c, struct model *m);
/*
 * PID has exited and its last figures were reported: its retired threads and
 * timeline events go. Returns how many of those events were among the first
 * BEFORE (the caller's index into the timeline moves back by as many).
 */
size_t mmu_extras_forget(struct mmu_extras *x, int pid, size_t before);
void mmu_extras_close(struct mmu_extras *x);

#endif
