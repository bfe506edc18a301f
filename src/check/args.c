// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "cli.h"
#include "log.h"
#include "parse.h"
#include "procs.h"
#include "session_args.h"
#include "sysinfo.h"

enum {
	OPT_VALIDATE = 1000,
};

const char *argp_program_version = "kvmmmu-check " KVMMMU_VERSION;

static const char doc[] =
	"Show what this host offers for tracing the KVM x86 MMU (kernel, BTF, KVM, /dev/kvm, "
	"binary statistics, tracepoints, function probes, RET_PF_* values) and what kvmmmu "
	"will use. Exits 0 when kvmmmu can trace this host, 1 when it cannot (with the "
	"reason), 2 on a usage error. Needs root.\n"
	"\n"
	"USAGE: kvmmmu-check [-v] [--probe-mode auto|fsession|fentry|kprobe|tracepoint]\n"
	"       kvmmmu-check --validate PID|NAME [SECS]\n"
	"\n"
	"With --validate, traces that VM for SECS seconds (default 5) and compares kvmmmu's "
	"counts with KVM's own counters over the same window, vCPU by vCPU; exits 0 when they "
	"agree, 1 when they do not. The VM is paused twice (SIGSTOP) for a few milliseconds "
	"so that both snapshots cover exactly the same faults.\n"
	"\v"
	"EXAMPLES:\n"
	"    kvmmmu-check                          # what kvmmmu-hist would use by default\n"
	"    kvmmmu-check --probe-mode kprobe      # as with kvmmmu-hist --probe-mode kprobe\n"
	"    kvmmmu-check -v                       # also libbpf's messages\n"
	"    kvmmmu-check --validate qemu 10       # is kvmmmu right about this VM?\n";

static const struct argp_option options[] = {
	SESSION_PROBE_MODE_OPTION,
	{"validate", OPT_VALIDATE, "PID|NAME", 0,
	 "Compare kvmmmu with KVM's counters for this VM (see above)", 0},
	{"verbose", 'v', NULL, 0, "Show libbpf's messages", 0},
	{NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0},
	{},
};

__attribute__((format(printf, 1, 2), noreturn)) static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", log_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct check_env *env = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		cli_key_init(state);
		break;
	case SESSION_OPT_PROBE_MODE: {
		struct session_args a = {0};

		session_args_parse(&a, key, arg); /* bad input: one line, exit 2 */
		env->mode = a.mode;
		break;
	}
	case 'v':
		env->verbose = true;
		break;
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case OPT_VALIDATE: {
		/* which VM is the user's to say: a spec that is none is a usage error, before any
		 * probing */
		struct proc_spec spec;
		char why[160];

		if (proc_spec_init(&spec, arg)) {
			proc_spec_why(arg, why, sizeof(why));
			proc_spec_free(&spec);
			usage_error("--validate '%s': %s", arg, why);
		}
		proc_spec_free(&spec);
		env->validate = arg;
		break;
	}
	case ARGP_KEY_ARG: {
		double secs;

		/* (argp hands arguments over after every option: --validate is known by now) */
		if (!env->validate && !parse_seconds(arg, &secs))
			usage_error("unexpected argument '%s': a duration goes with --validate",
				    arg);
		if (!env->validate || state->arg_num > 0)
			usage_error("unexpected argument '%s' (see --help)", arg);
		if (parse_seconds(arg, &env->validate_secs))
			usage_error("the --validate duration '%s': expected " PARSE_SECONDS_RANGE,
				    arg);
		break;
	}
	case ARGP_KEY_END:
		if (!env->validate_secs)
			env->validate_secs = 5;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

void check_parse_args(int argc, char **argv, struct check_env *env)
{
	static const struct argp argp = {options, parse_opt, NULL, doc, NULL, NULL, NULL};

	env->mode = PROBE_MODE_AUTO;
	cli_parse(&argp, argc, argv, 0, env);
}
