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
#include "prog_info.h"
#include "ret_pf.h"
#include "regions.h"
#include "slow_faults.h"
#include "kernel_symbols.h"
#include "source.h"
#include "threads.h"
#include "timeline.h"

struct faults_bpf;
struct faults_session_bpf;

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
	struct faults_session_bpf *session; /* its fsession programs, on its maps; NULL: none */
	struct attach_links links;
	struct load_watch watch; /* while it loads: programs that may load another way */
	struct probe_status probes[FAULTS_MAX_PROBES];
	size_t n_probes;
	bool func_mode;	  /* outcomes come from function probes */
	bool has_pf_fast; /* the kernel's struct kvm_vcpu_stat has pf_fast (fast_at_return) */
	bool done_event;  /* ... or from kvmmmu:kvm_mmu_page_fault_done (kernel-patches/) */
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
/* Adds every fault program's run time and skipped runs (both objects) to SUM. */
void faults_source_prog_info(const struct faults_source *fs, struct prog_info_sum *sum);
const struct probe_status *faults_source_probe(const struct faults_source *fs, const char *name);
/* Whether a histogram can be filled with what is attached; WHY: why not. */
bool faults_source_hist_available(const struct faults_source *fs, int hist, const char **why);
/* Whether KVMMMU_* COUNTER is counted: an event count's tracepoint may be off (function mode). */
bool faults_source_counted(const struct faults_source *fs, int counter);
void faults_source_close(struct faults_source *fs);
/* Its tracepoints into OUT (at most MAX): how many it has. */
size_t faults_source_tracepoints(struct source_tracepoint *out, size_t max);

/*
 * ---- for the source's own files: its probe points and the plan that
 * picks them for a session's options (source_faults_probes.c) ----
 */

/* A tracepoint of the faults object. */
struct faults_tp_point {
	const char *group, *event;
	bool optional;
	bool patched; /* only kernels with kernel-patches/ have it; used in tracepoint mode */
	bool forks;   /* only to follow a command's descendants (follow_forks) */
	bool stacks;  /* only for --stack: where slow faults wait off the CPU */
	size_t progs[N_PROG_SLOTS];
	/*
	 * the tracepoint model's: function probes give what it rebuilds, and
	 * the done event most of it (except what NEEDED_BY says), so in those
	 * modes it is attached only for COUNTER and SECOND_COUNTER, its event
	 * counts (the KVMMMU_* ones it alone feeds; -1: none), and not with
	 * event_counts_off
	 */
	bool model;
	unsigned needed_by;
	int counter, second_counter;
};

/* What a model event gives that function probes or the done event do not (needed_by). */
enum {
	/*
	 * the done event with the mmu_lock figures, the phases or --slower: the
	 * guest walk and its end (a fault's lock waits, its walk phase, its
	 * walk-to-SPTE time)
	 */
	MODEL_NEEDED_DONE_WALK = 1 << 0,
	/* --metric phases: the map phase's end */
	MODEL_NEEDED_PHASES = 1 << 1,
	/* function probes on a kernel without KVM's pf_fast statistic: the fast path's fixes */
	MODEL_NEEDED_NO_PF_FAST = 1 << 2,
	/* the done event with --slower: its slow faults, timed from the walk to the SPTE */
	MODEL_NEEDED_DONE_SLOWER = 1 << 3,
	/* function probes, always: the request's fault, whose level the return reads */
	MODEL_NEEDED_FUNCS = 1 << 4,
	/* the levels requested and why not huge, and --metric regions' slow faults */
	MODEL_NEEDED_LEVELS = 1 << 5,
};

/*
 * Function probes; those with exit programs also need a return probe. An
 * fexit program reads the return value after the arguments, at a fixed
 * index: RET_ARG says where (the arguments the 5.16+ prototype has), -1
 * where it reads none. A kernel with another prototype gets the kretprobe,
 * which reads it from the return register whatever the arguments.
 */
struct faults_func_point {
	const char *func;
	bool defines_outcome; /* needed for function-probe outcomes */
	bool may_be_absent;   /* a handler some kernels do not build: absent, it takes no fault */
	int ret_arg;
	size_t progs[N_PROG_SLOTS];
	bool phase;	  /* times a phase of a fault: only with --metric phases */
	bool alternative; /* another name of the function before it: probed if that one is not */
	bool memslot;	  /* the memslot figures' only: not probed without them (memslot_off) */
};

#define FAULTS_N_TP 16
#define FAULTS_N_FUNC 13
_Static_assert(FAULTS_N_FUNC + FAULTS_N_TP <= FAULTS_MAX_PROBES, "every probe point has a status");

extern const struct faults_tp_point faults_tracepoints[];
extern const struct faults_func_point faults_functions[];

/* Probe point I's programs in the loaded skeleton: the functions first, then the tracepoints. */
struct probe_progs faults_probe_progs(const struct faults_source *fs, size_t i);
/*
 * Whether function I is to be probed, given the kinds chosen for those
 * before it (FUNC_KIND); says why not in WHY (SIZE), if SIZE.
 */
bool faults_function_wanted(const struct faults_source *fs, size_t i,
			    const enum attach_kind func_kind[FAULTS_N_FUNC], char *why,
			    size_t size);
/*
 * Which programs of the opened object load, for the kinds chosen
 * (FUNC_KIND, RAW_ONLY), each probe point's status, and what the programs
 * are told before load (its read-only data).
 */
void faults_plan(struct faults_source *fs, const enum attach_kind func_kind[FAULTS_N_FUNC],
		 const bool raw_only[FAULTS_N_TP]);
/* Whether both ends of function I are probed (a handler's entry only for some figures). */
bool faults_function_both_ends(const struct faults_source *fs, size_t i);

/* ---- its fsession programs (source_faults_session.c) ---- */

/* Whether function I may have one fsession program: it has one, and both its ends are wanted. */
bool faults_session_fits(const struct faults_source *fs, size_t i);
/*
 * Loads the fsession programs of the functions FUNC_KIND gives ATTACH_FSESSION,
 * on the loaded faults object's maps; 0 (also with none), or -errno.
 */
int faults_session_load(struct faults_source *fs, const enum attach_kind func_kind[FAULTS_N_FUNC]);
/* Function I's fsession program once loaded, else NULL. */
struct bpf_program *faults_session_prog(const struct faults_source *fs, size_t i);
const struct bpf_object *faults_session_object(const struct faults_source *fs);
void faults_session_close(struct faults_source *fs);

#endif
