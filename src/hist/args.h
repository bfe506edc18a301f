/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_HIST_ARGS_H
#define KVMMMU_HIST_ARGS_H

#include <stdbool.h>

#include "collector.h"
#include "procs.h"
#include "render.h"
#include "session_args.h"

struct hist_env {
	struct session_args session; /* -p, --probe-mode, --sample */
	bool wait;		     /* keep waiting for -p matches that do not exist yet */
	int vcpu;		     /* --vcpu, -1 for all */
	bool per_vcpu;
	bool timestamp;
	double interval; /* seconds, 0: only the final summary */
	long count;	 /* intervals to print, 0: unlimited */
	double duration; /* -d, 0: until Ctrl-C or the command exits */
	const char *csv_path;
	const char *label;
	bool show[N_SECTIONS];
	double unit_ns;
	const char *unit;
	enum attribution attribution;
	char **command; /* after "--" */
	char *command_line;
	bool verbose;
	uint64_t slower_ns;	   /* --slower: report faults at least this long; 0: off */
	bool slow_stacks;	   /* --stack: with the kernel stack of their longest wait */
	unsigned int region_shift; /* --region: log2 of a hot region's size; 0: the default */
};

/* Parses argv; returns 0, or exits with status 2 after one line on stderr. */
int hist_parse_args(int argc, char **argv, struct hist_env *env);

#endif
