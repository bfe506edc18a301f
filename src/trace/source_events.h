/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MMU-events source: bpf/mmu_events.bpf.c, the MMU lifecycle (shadow
 * pages made, reused, zapped, synced; huge pages split; fast zaps; root
 * loads) and the VMM's memslot and dirty-log ioctls, counted per thread,
 * each also an event of the timeline with the faults since its VM's last.
 */
#ifndef KVMMMU_SOURCE_EVENTS_H
#define KVMMMU_SOURCE_EVENTS_H

#include <stdbool.h>

#include "attach.h"
#include "model.h"
#include "source.h"
#include "threads.h"
#include "timeline.h"

struct mmu_events_bpf;

#define EVENTS_MAX_PROBES 12

struct retired_mmu {
	struct kvmmmu_thread_key key;
	struct kvmmmu_mmu_stats stats;
};

struct events_source {
	struct mmu_events_bpf *skel;
	struct attach_links links;
	struct probe_status probes[EVENTS_MAX_PROBES];
	size_t n_probes;
	struct threads *threads; /* numbers each event's VM */
	struct timeline timeline;
	double mono_to_wall;	    /* add to bpf_ktime_get_ns() seconds to get wall time */
	struct retired_set retired; /* of struct retired_mmu */
	bool ok;		    /* lifecycle counters and the timeline work */
};

/*
 * Opens and attaches what this kernel allows, registering its exit hook and
 * its event ring with THREADS; what fails is off, the probes say why.
 */
int events_source_open(struct events_source *x, const struct source_env *env,
		       struct threads *threads);
const struct kvmmmu_health *events_source_health(const struct events_source *x);
/* Every thread's lifecycle counters and ioctl times into M. */
int events_source_read(struct events_source *x, struct threads *threads, struct model *m);
/*
 * PID has exited and its last figures were reported: its retired threads
 * and timeline events go. Returns how many of those events were among the
 * first BEFORE (the caller's index into the timeline moves back by as many).
 */
size_t events_source_forget(struct events_source *x, int pid, size_t before);
void events_source_close(struct events_source *x);
/* Its tracepoints into OUT (at most MAX): how many it has. */
size_t events_source_tracepoints(struct source_tracepoint *out, size_t max);

#endif
