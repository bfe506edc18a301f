/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_TOP_H
#define KVMMMU_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "args.h"
#include "csv.h"
#include "render.h"
#include "session.h"
#include "table.h"

#define TOP_MAX_GONE 1024
/* --slower: the newest slow faults kept for 'l' */
#define TOP_SLOW_KEPT 256

/* kvmmmu-top's state: the session, the last snapshots, what the user chose. */
struct top {
	struct top_env env;
	struct session s;
	struct snapshot facts; /* how figures are had: for the header */
	struct snapshot prev;  /* the last refresh's */
	bool have_prev;
	struct snapshot older; /* the one before: the interval's start */
	bool have_older;
	struct snapshot base; /* 'r': since-start values count from here */
	bool have_base;
	double start_wall;
	struct top_table table;
	size_t frames;
	/* exited VMs and the refresh that first saw them gone */
	struct {
		int pid;
		size_t frame;
	} gone[TOP_MAX_GONE];
	size_t n_gone;
	/* VMs that have left the session: how many, their counts since the start (or 'r') */
	size_t n_exited;
	struct figures exited;
	/* the user's choices */
	enum top_sort sort;
	bool invert, since_start, paused, quit, help;
	double delay;
	int vm_pid; /* > 0: showing the vCPUs of VM vm_index of this process */
	int vm_index;
	int vcpu;	  /* >= 0 (with vm_pid): showing this vCPU's histogram and outcomes */
	char filter[128]; /* VM names shown: a regex, "" for all */
	char status[160]; /* a one-line message (a bad filter) */
	void *filter_re;  /* its compiled regex_t, NULL for none */
	size_t hidden;	  /* the VM rows the filter hides */
	/* kvmmmu's own BPF run time: the total at the last refresh, and per second since */
	bool bpf_stats;
	__u64 bpf_ns;
	double bpf_ns_per_s;
	size_t selected; /* the highlighted row */
	struct csv_writer csv;
	bool csv_open;
	/* --slower: those of the last refresh, the newest before them, how many in all */
	struct slow_faults slow_new, slow;
	__u64 slow_seen;
	bool show_slow; /* 'l': the vCPU view lists its slow faults, not its histogram */
};

/* A new snapshot, and the table against the last one (or the start, or the reset). */
int top_refresh(struct top *t);
/* The snapshot the shown values count from (NULL: the start), and the seconds since it. */
const struct snapshot *top_ref(const struct top *t, double *dt);
/* 'r': since-start values count from now. */
void top_reset(struct top *t);
/* --slower: the slow faults reported since the last refresh (and to the CSV); 0 or -errno. */
int top_slow_take(struct top *t);
/* The vCPU view's slow faults, newest first, as text to draw (malloc'ed; NULL: no memory). */
char *top_slow_text(const struct top *t);
void top_slow_free(struct top *t);
/* --region: VM VM_INDEX of PID's most faulted regions (since the start), as text, onto F. */
void top_print_regions(FILE *f, const struct top *t, int pid, int vm_index);
/* Ctrl-C (or SIGTERM, SIGHUP, SIGQUIT) has asked kvmmmu-top to quit. */
bool top_quit_signalled(void);
/* '/' or 'f': show the VMs whose name matches REGEX ("" for all); -EINVAL if not a regex. */
int top_set_filter(struct top *t, const char *regex);

#endif
