/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The faults source: bpf/faults.bpf.c, which counts every fault by path
 * and outcome and times it. It decodes RET_PF_* for this kernel, chooses
 * each probe (attach.h), loads the object another way when a program is
 * refused, and reads the per-thread figures, those of exited threads
 * included, into the model. Its maps (pid filter, thread news, ...) are
 * shared with the other sources.
 */
#ifndef KVMMMU_SOURCE_FAULTS_H
#define KVMMMU_SOURCE_FAULTS_H

#include <stdbool.h>
#include <stddef.h>

#include "attach.h"
#include "model.h"
#include "ret_pf.h"
#include "regions.h"
#include "slow_faults.h"
#include "kernel_symbols.h"
#include "source.h"
#include "threads.h"
#include "timeline.h"

struct faults_bpf;

#define FAULTS_MAX_PROBES 32

/* A thread that exited: its last figures, kept once its map entry is freed. */
struct retired_thread {
	struct kvmmmu_thread_key key;
	struct kvmmmu_thread_stats stats;
};

struct faults_source {
	const struct collector_opts *opts;
	struct attach_engine *engine;
	struct thread_maps sizes;
	struct threads *threads; /* names lost threads, places figures */
	struct faults_bpf *skel;
	struct attach_links links;
	struct load_watch watch; /* while it loads: programs that may load another way */
	struct probe_status probes[FAULTS_MAX_PROBES];
	size_t n_probes;
	bool func_mode;	 /* outcomes come from function probes */
	bool done_event; /* ... or from kvmmmu:kvm_mmu_page_fault_done (kernel-patches/) */
	struct ret_pf_table ret_pf;
	struct kvmmmu_lock_table *lock_table; /* the mmu_locks map, mmap()ed; NULL if not */
	struct retired_thread *retired;
	size_t n_retired, cap_retired;
	struct regions regions_done;  /* --metric regions: the ended epochs' counts, added up */
	struct regions storms;	      /* ... and per epoch, until its event takes them */
	struct slow_faults slow;      /* --slower: reported, not taken yet */
	struct kernel_symbols *ksyms; /* --stack: their frames' names; NULL: addresses */
	double mono_to_wall;	      /* add to bpf_ktime_get_ns() seconds to get wall time */
	char memslot_off_why[64];     /* "off: --metric memslot", in the tool's words */
	char phases_off_why[64];      /* "off: --metric phases" */
};

/*
 * Decodes RET_PF_* (BTF, then tracefs), chooses, loads and attaches; 0, or
 * -errno (said in one line; libbpf's log with it only when nothing loaded).
 */
int faults_source_open(struct faults_source *fs, const struct source_env *env,
		       struct threads *threads);
/* Its maps the other sources reuse. */
void faults_source_shared(const struct faults_source *fs, struct shared_maps *maps);
const struct kvmmmu_health *faults_source_health(const struct faults_source *fs);
/*
 * Lets faults start counting, once every program of every object is
 * attached (they attach one by one: a request seen before its SPTE's
 * program was there would look spurious). Take KVM's baselines just before.
 */
void faults_source_arm(struct faults_source *fs);
/* Adds PID to the BPF pid filter; its threads must not have run yet (see opts.pids). */
int faults_source_trace_pid(struct faults_source *fs, int pid);
/* The registry's exit hook (threads_retire_fn). */
void faults_source_retire(void *ctx, const struct kvmmmu_thread_key *key, bool gone);
/* The backstop when thread news was lost: names every thread, retires those that exited. */
void faults_source_scan(struct faults_source *fs);
/*
 * Every thread's figures into M. FINAL resolves faults still waiting for an
 * SPTE as spurious: at the end nothing follows them.
 */
int faults_source_read(struct faults_source *fs, struct model *m, bool final);
/* PID's exited threads' figures go (they were reported). */
void faults_source_forget(struct faults_source *fs, int pid);
/* --slower: the slow_faults ring buffer joins the threads' one the session polls; 0 or -errno
 * (said). */
int faults_source_watch_slow(struct faults_source *fs);
/* --metric regions: every VM's faults per memslot and region so far, into OUT; 0 or -errno. */
int faults_source_read_regions(struct faults_source *fs, struct regions *out);
/*
 * --metric regions: the ended epochs' counts out of the map, into the
 * totals and the storms (as events come: a report may be far off, and the
 * map holds an epoch's regions apart); 0 or -errno.
 */
int faults_source_fold_regions(struct faults_source *fs);
/*
 * --metric regions: T's events from FROM on take their storms, the regions
 * of their VM's faults since its previous event (after a read of them: an
 * event's epoch has ended by then).
 */
void faults_source_take_storms(struct faults_source *fs, struct timeline *t, size_t from);
/* --metric regions: PID's regions were reported and go. */
void faults_source_forget_regions(struct faults_source *fs, int pid);
/* --slower: moves the slow faults reported so far into OUT; 0 or -ENOMEM. */
int faults_source_take_slow(struct faults_source *fs, struct slow_faults *out);
/* Runs of the fault programs the kernel skipped (recursion on one CPU), from their prog info. */
__u64 faults_source_prog_missed(const struct faults_source *fs);
const struct probe_status *faults_source_probe(const struct faults_source *fs, const char *name);
/* Whether a histogram can be filled with what is attached; WHY: why not. */
bool faults_source_hist_available(const struct faults_source *fs, int hist, const char **why);
/* Whether KVMMMU_* COUNTER is counted: an event count's tracepoint may be off (function mode). */
bool faults_source_counted(const struct faults_source *fs, int counter);
void faults_source_close(struct faults_source *fs);
/* Its tracepoints into OUT (at most MAX): how many it has. */
size_t faults_source_tracepoints(struct source_tracepoint *out, size_t max);

#endif
