/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector: the sources (faults, mmu_lock, MMU events) over one attach
 * engine and one thread registry, opened in order (the faults object
 * first: the others share its maps and follow its probe mode), read into
 * one model, and closed.
 */
#ifndef KVMMMU_COLLECTOR_H
#define KVMMMU_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "attach.h"
#include "model.h"
#include "source.h"
#include "source_events.h"
#include "source_faults.h"
#include "source_lock.h"
#include "threads.h"

struct collector {
	struct collector_opts opts;
	struct attach_engine engine;
	struct threads threads;
	struct faults_source faults;
	struct lock_source lock;
	struct events_source events;
	bool lock_on, events_on; /* asked for: their probes are listed */
	__u64 news_lost;	 /* thread news lost, as last seen */
};

/*
 * Opens the faults object (what fails of it fails the collector, said in
 * one line), then the others asked for (what fails of those is left off,
 * with reasons).
 */
int collector_open(struct collector *c, const struct collector_opts *opts);
/* Lets faults start counting, once everything is attached (faults_source_arm). */
void collector_arm(struct collector *c);
/* Adds PID to the BPF pid filter; its threads must not have run yet (see opts.pids). */
int collector_trace_pid(struct collector *c, int pid);
/*
 * Waits up to TIMEOUT_MS for BPF to announce new threads (and timeline
 * events), and names each one at once, reading /proc for its vCPU while it
 * is alive: a short VM is then named and attributed however fast it ends.
 * Returns the number of records handled, or a negative errno.
 */
int collector_poll(struct collector *c, int timeout_ms);
/* An fd that polls readable when BPF has news (for a caller's own poll loop). */
int collector_poll_fd(const struct collector *c);
/*
 * Handles what BPF announced, rescans the maps when announcements were lost,
 * and refreshes the /proc vCPU map of live VMs that need it. Call every tick.
 */
void collector_tick(struct collector *c);
/* Every source's health counters, summed. */
void collector_health_sum(const struct collector *c, struct kvmmmu_health *sum);
/*
 * Reads every thread's figures of every source into M (which must be
 * empty). FINAL resolves faults still waiting for an SPTE as spurious: at
 * the end nothing follows them.
 */
int collector_read(struct collector *c, struct model *m, bool final);
/*
 * PID has exited and its last figures were reported: it leaves the
 * collector (bounded state), its timeline events too; *TIMELINE_SEEN, the
 * caller's index of events already shown, moves back by the shown ones
 * that went.
 */
void collector_forget_process(struct collector *c, int pid, size_t *timeline_seen);
/* The timeline (the events source's), or NULL when it is off. */
struct timeline *collector_timeline(struct collector *c);
/* Every source's probes, the faults object's first (N_FAULTS of them); a malloc()ed copy. */
struct probe_status *collector_probes(const struct collector *c, size_t *n, size_t *n_faults);
/* Whether a histogram can be filled with what is attached. */
bool collector_hist_available(const struct collector *c, int hist, const char **why);
void collector_close(struct collector *c);
/*
 * Every tracepoint any source can attach, the faults source's first, into
 * OUT (at most MAX): how many there are. Needs no open collector.
 */
size_t collector_tracepoints(struct source_tracepoint *out, size_t max);

#endif
