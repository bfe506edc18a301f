/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_SESSION_H
#define KVMMMU_SESSION_H

/*
 * One tracing session: everything live that a command reads figures from.
 * It owns the collector (the sources and their BPF objects), the choice of
 * VMs (-p PIDs and names, a command run under it) and the BPF pid filter,
 * KVM's own counters (kvm_counts.h: stats fds taken with pidfd_getfd at a
 * VM's first sighting), and the command (command.h). Commands open a
 * session with options, wait on it, and ask it for snapshots; none of them
 * touches a BPF map or reads a VM's /proc.
 */
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "collector.h"
#include "command.h"
#include "intset.h"
#include "model.h"
#include "procs.h"
#include "snapshot.h"
#include "kvm_counts.h"

struct session_opts {
	enum probe_mode mode;
	enum attribution attribution;
	bool phases;	  /* where each fault's time goes: walk, pfn, lock, map */
	__u64 slower_ns;  /* report each fault at least this long (with its phases) */
	bool slow_stacks; /* ... and where it waited longest off the CPU (its stack) */
	/* the memslot figures are not wanted: their probes (two runs a lookup, several lookups
	   a fault under shadow paging) stay off */
	bool memslot_off;
	/* the tracepoint event counts (kvmmmu-hist --metric events) are not wanted: with function
	   probes or the done event, the tracepoints only the tracepoint model needs stay off */
	bool event_counts_off;
	/* no mapping levels requested or why not huge (the done event may skip their event) */
	bool levels_off;
	/* the tool's options that turn the memslot figures and the phases on, named where their
	   probes are off; NULL: kvmmmu-hist's "--metric memslot", "--metric phases" */
	const char *memslot_option, *phases_option;
	unsigned int region_shift; /* faults per memslot and region of 1 << this; 0: off */
	unsigned int sample_every; /* time 1 fault in N; 0 or 1: every fault */
	bool lock;		   /* the mmu_lock probes */
	bool events;		   /* the MMU lifecycle and timeline probes */
	bool kvm_stats;		   /* KVM's own counters of the traced VMs */
	bool kvm_stats_quiet;	   /* the caller says why they cannot be read (kvm.err) */
	/* the VMs: -p PIDs and names (none and no command: every VM) */
	const struct proc_spec *specs;
	int n_specs;
	bool wait;	     /* -p names that match nothing yet are waited for */
	char **command;	     /* run under the session, held until session_start() */
	bool command_stderr; /* the command's stdout goes to stderr (stdout is CSV) */
};

struct session {
	struct session_opts opts;
	struct collector c;   /* every BPF object, and what they saw */
	struct intset traced; /* the VMs -p or the command selected, as they appear */
	/*
	 * Processes the probes saw that have no VM open: a kernel thread's or a
	 * process's own MMU-notifier zaps of a VM's memory (compaction, reclaim)
	 * run in their context. Not shown as VMs.
	 */
	struct intset not_vmms;
	struct command cmd;    /* the command run under the session, if any */
	struct kvm_counts kvm; /* KVM's own counters of the VMs shown */
	double kvm_read_gap;   /* seconds between the last read of kvmmmu's figures and KVM's */
	size_t timeline_seen;  /* timeline events some snapshot already had as new */
	__u64 storms_seen_ts;  /* --metric regions: the last event whose storm was taken (its ts) */
	double armed_at;       /* monotonic seconds when counting began */
};

/* Whether the options can work (each -p names a VM unless waiting, the command exists). */
int session_check(const struct session_opts *opts);
/*
 * Checks the options (every -p names a VM unless waiting, the command can
 * be run), loads and attaches, starts the command held, takes KVM's
 * baselines and starts counting. On error it has said why (one line).
 */
int session_open(struct session *s, const struct session_opts *opts);
/* Lets the command run. */
void session_start(struct session *s);
/* Waits up to TIMEOUT_MS for news, and acts on it: new VMs, their stats fds. */
void session_wait(struct session *s, int timeout_ms);
/* An fd that polls readable when there is news for session_wait() (a caller's own loop). */
int session_poll_fd(const struct session *s);
/* The command has exited, or every -p PID has. */
bool session_done(struct session *s);
/*
 * kvmmmu's figures of the traced VMs into M (FINAL: the last read, which
 * also ends faults that nothing can end any more), then KVM's counters.
 */
int session_read(struct session *s, struct model *m, bool final);
/*
 * A snapshot (snapshot.h) of everything now: session_read() into its model,
 * then copies of the facts, KVM's counters and the timeline. Free it with
 * snapshot_free().
 */
int session_snapshot(struct session *s, struct snapshot *snap, bool final);
/* A snapshot without figures: how they are had (the probes, names, what cannot be shown). */
int session_facts(const struct session *s, struct snapshot *snap);
/*
 * PID has exited and its last figures were shown: it leaves the session
 * (its retired threads, names, timeline and KVM counters), so that a long
 * run with VMs coming and going keeps its memory flat (kvmmmu-top; the
 * exporter). kvmmmu-hist keeps every VM for its summary.
 */
void session_forget(struct session *s, int pid);
/*
 * Timeline events some snapshot already had as new go (each VM's latest
 * stays), for callers that show each event once: otherwise a live VM's
 * timeline grows for as long as it runs (the exporter, every scrape).
 */
void session_trim_timeline(struct session *s);
/* --slower: the slow faults reported since the last call, appended to OUT; 0 or -ENOMEM. */
int session_take_slow(struct session *s, struct slow_faults *out);
/* What a session holds of the VMs it has seen: a long run's must stay bounded. */
struct session_held {
	size_t names;		/* threads and processes named */
	size_t retired_threads; /* exited threads' last figures */
	size_t timeline_events;
	size_t kvm_counters; /* VMs whose KVM stats fds are open */
};
void session_held(const struct session *s, struct session_held *h);
/* Writes the first MAX names held ("PID/TID COMM", "(exited)"), a line each after PREFIX. */
void session_print_held_names(const struct session *s, FILE *f, const char *prefix, size_t max);
/* KVM's counters: intervals start here. */
void session_mark(struct session *s);
bool session_is_traced(const struct session *s, int pid);
/* Ctrl-C or -d ended tracing first: stop the command (SIGTERM, then SIGKILL). */
void session_stop(struct session *s);
void session_close(struct session *s);

/*
 * --vcpu N: whether the VMs O's -p selects now have vCPU N (true without -p:
 * any VM, now or later, is checked at the end); and whether the VMs S
 * traced, or FINAL's figures of those gone, had it.
 */
bool session_selects_vcpu(const struct session_opts *o, int vcpu);
bool session_has_vcpu(const struct session *s, const struct model *final, int vcpu);

#endif
