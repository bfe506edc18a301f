/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_TOP_ARGS_H
#define KVMMMU_TOP_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "collector.h"
#include "procs.h"
#include "session_args.h"
#include "table.h"

struct top_env {
	struct session_args session; /* -p, --probe-mode, --sample */
	double delay;		     /* -d: seconds between frames */
	bool batch;		     /* -b, or stdout is not a terminal */
	long count;		     /* -n: frames, 0: until quit */
	enum top_sort sort;
	bool since_start;	   /* counts since the start, not per second */
	bool per_vcpu;		   /* batch: each VM's vCPU rows under it */
	bool phases;		   /* --phases: where the faults' time goes, in the vCPU view */
	bool memslot;		   /* --memslot: the SLOT/F column (memslot lookups per fault) */
	uint64_t slower_ns;	   /* --slower: record faults at least this long; 0: off */
	bool slow_stacks;	   /* --stack: ... with the stack of their longest wait */
	unsigned int region_shift; /* --region: log2 of a hot region's size; 0: off */
	const char *csv_path;
	bool verbose;
	char *command_line;
};

/* Parses argv; returns 0, or exits with status 2 after one line on stderr. */
int top_parse_args(int argc, char **argv, struct top_env *env);

#endif
