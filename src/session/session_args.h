/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_SESSION_ARGS_H
#define KVMMMU_SESSION_ARGS_H

/*
 * The session's options as every live command (kvmmmu-hist, kvmmmu-top, the
 * exporter) takes them: -p PID|NAME (repeatable), --probe-mode, --sample;
 * kvmmmu-check takes --probe-mode alone.
 */
#include <argp.h>
#include <stdbool.h>

#include "collector.h"
#include "procs.h"

#define SESSION_MAX_SPECS 16

enum {
	SESSION_OPT_PROBE_MODE = 900,
	SESSION_OPT_SAMPLE,
};

/* --probe-mode alone, for commands that take no VM (kvmmmu-check) */
#define SESSION_PROBE_MODE_OPTION                                                                  \
	{                                                                                          \
		"probe-mode", SESSION_OPT_PROBE_MODE, "MODE", 0,                                   \
			"How to probe functions: auto (default, or KVMMMU_PROBE_MODE), "           \
			"fsession, fentry, kprobe or tracepoint",                                  \
			0                                                                          \
	}

/* -p, --probe-mode and --sample; WHAT begins -p's help ("Trace only", "Export only") */
#define SESSION_ARGP_OPTIONS(what)                                                                 \
	{"pid",                                                                                    \
	 'p',                                                                                      \
	 "PID|NAME",                                                                               \
	 0,                                                                                        \
	 what " this VM (PID, or a name matching its process or VM name); repeatable, or a "       \
	      "comma list",                                                                        \
	 0},                                                                                       \
		SESSION_PROBE_MODE_OPTION,                                                         \
	{                                                                                          \
		"sample", SESSION_OPT_SAMPLE, "N", 0,                                              \
			"Time 1 fault in N for the latency histograms (every fault is still "      \
			"counted and classified)",                                                 \
			0                                                                          \
	}

struct session_args {
	struct proc_spec specs[SESSION_MAX_SPECS];
	int n_specs;
	enum probe_mode mode;
	unsigned int sample_every;
};

/*
 * -p ARG: one spec, or a comma list of them as top and perf take it
 * ("1234,qemu"), into SPECS (N of MAX so far). Bad input: one line, exit 2.
 */
void session_add_specs(struct proc_spec *specs, int *n, int max, const char *arg);
/* If KEY is one of those options: ARG into A, true. Bad input: one line on stderr, exit 2. */
bool session_args_parse(struct session_args *a, int key, const char *arg);
void session_args_free(struct session_args *a);

#endif
