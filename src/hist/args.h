/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_HIST_ARGS_H
#define KVMMMU_HIST_ARGS_H

#include <stdbool.h>

#include "collector.h"
#include "procs.h"
#include "render.h"

#define MAX_SPECS 16

struct hist_env {
	struct proc_spec specs[MAX_SPECS];
	int n_specs;
	bool wait; /* keep waiting for -p matches that do not exist yet */
	int vcpu;  /* --vcpu, -1 for all */
	bool per_vcpu;
	unsigned int sample_every; /* --sample: 1 fault in N timed (0 or 1: every one) */
	bool timestamp;
	double interval; /* seconds, 0: only the final summary */
	long count;	 /* intervals to print, 0: unlimited */
	double duration; /* -d, 0: until Ctrl-C or the command exits */
	const char *csv_path;
	const char *label;
	bool show[N_SECTIONS];
	double unit_ns;
	const char *unit;
	enum probe_mode mode;
	enum attribution attribution;
	char **command; /* after "--" */
	char *command_line;
	bool verbose;
};

/* Parses argv; returns 0, or exits with status 2 after one line on stderr. */
int hist_parse_args(int argc, char **argv, struct hist_env *env);

#endif
