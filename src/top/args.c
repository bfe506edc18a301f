// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "log.h"
#include "parse.h"
#include "sysinfo.h"

enum {
	OPT_CSV = 1000,
	OPT_SINCE_START,
	OPT_PER_VCPU,
	OPT_PHASES,
	OPT_MEMSLOT,
	OPT_SLOWER,
	OPT_STACK,
	OPT_REGION,
};

const char *argp_program_version = "kvmmmu-top " KVMMMU_VERSION;

static const char doc[] =
	"A live view of KVM MMU faults per VM and per vCPU: rates, outcomes (RET_PF_*), "
	"paths, latency, mmu_lock waits.\n"
	"\n"
	"USAGE: kvmmmu-top [-p PID|NAME]... [-d SECS] [-s KEY] [-b [-n COUNT] [--per-vcpu]] "
	"[--since-start] [--phases] [--memslot] [--slower MS [--stack]] [--region SIZE] "
	"[--csv FILE]\n"
	"\v"
	"KEYS: Enter a VM's vCPUs, then a vCPU's histogram, Esc back; / or f filter by name; "
	"Up/Down select; < > sort column, i invert; "
	"t interval or since-start values, r reset since-start; s refresh delay; "
	"l a vCPU's slow faults (--slower); "
	"space or z pause; h or ? help; q, Esc (top level) or Ctrl-C quit.\n"
	"SORT KEYS (-s): faults, name, pid, p99, lock.\n"
	"\n"
	"EXAMPLES:\n"
	"    kvmmmu-top                       # every VM, refreshed every second\n"
	"    kvmmmu-top -p web-1 -d 0.5       # VMs named web-1 (QEMU -name), twice a second\n"
	"    kvmmmu-top -b -n 5 --per-vcpu    # five plain frames, for logs and grep\n"
	"    kvmmmu-top -b -n 10 --csv top.csv\n"
	"    kvmmmu-top --slower 1 --stack    # l in a vCPU's view: its faults of 1 ms or more\n";

static const struct argp_option options[] = {
	SESSION_ARGP_OPTIONS("Show"),
	{"delay", 'd', "SECS", 0, "Seconds between refreshes (default 1)", 0},
	{"sort", 's', "KEY", 0, "Sort by KEY (see SORT KEYS; default faults)", 0},
	{"batch", 'b', NULL, 0, "Plain text frames on stdout, no screen (also when not a tty)", 0},
	{"frames", 'n', "COUNT", 0, "Stop after COUNT frames", 0},
	{"since-start", OPT_SINCE_START, NULL, 0, "Counts since the start instead of rates", 0},
	{"per-vcpu", OPT_PER_VCPU, NULL, 0, "Batch mode: each VM's vCPU rows under it", 0},
	{"csv", OPT_CSV, "FILE", 0, "Also write kvmmmu CSV (as kvmmmu-hist) at each refresh", 0},
	{"phases", OPT_PHASES, NULL, 0,
	 "Where each fault's time goes (walk, pfn, mmu_lock, map, other), in the vCPU view; "
	 "costs probes and clock reads in every fault",
	 0},
	{"memslot", OPT_MEMSLOT, NULL, 0,
	 "A SLOT/F column: memslot lookups per fault (function probes only); costs two program "
	 "runs a lookup, 1 a fault under the TDP MMU and 7 or more under shadow paging",
	 0},
	{"slower", OPT_SLOWER, "MS", 0,
	 "Record each fault of MS milliseconds or more (decimals allowed): l in a vCPU's view "
	 "lists its newest; batch mode prints them under each frame",
	 0},
	{"stack", OPT_STACK, NULL, 0,
	 "With --slower: and where each waited longest off the CPU, as a kernel stack", 0},
	{"region", OPT_REGION, "SIZE", 0,
	 "Hot regions of SIZE (a power of two, 4K to 1T) in a VM's view (and with --per-vcpu): "
	 "its most faulted memslot regions; costs a hash update a fault",
	 0},
	{"verbose", 'v', NULL, 0,
	 "Show libbpf's messages; batch mode: what the session keeps, at each frame", 0},
	{NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0},
	{},
};

#define usage_error cli_usage_error

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct top_env *env = state->input;
	uint64_t v;

	if (session_args_parse(&env->session, key, arg))
		return 0;
	switch (key) {
	case ARGP_KEY_INIT:
		cli_key_init(state);
		break;
	case 'd':
		if (parse_seconds(arg, &env->delay) || env->delay < 0.1 || env->delay > 3600)
			usage_error("-d '%s': expected seconds from 0.1 to 3600", arg);
		break;
	case 's':
		if (top_sort_parse(arg, &env->sort))
			usage_error("-s '%s': expected faults, name, pid, p99 or lock", arg);
		break;
	case 'b':
		env->batch = true;
		break;
	case 'n':
		if (parse_u64_range(arg, 1, 1000000000, &v))
			usage_error("-n '%s': expected a positive number of frames", arg);
		env->count = (long)v;
		break;
	case OPT_SINCE_START:
		env->since_start = true;
		break;
	case OPT_PER_VCPU:
		env->per_vcpu = true;
		break;
	case OPT_CSV:
		env->csv_path = arg;
		break;
	case OPT_PHASES:
		env->phases = true;
		break;
	case OPT_MEMSLOT:
		env->memslot = true;
		break;
	case OPT_SLOWER:
		if (parse_millis_ns(arg, &env->slower_ns))
			usage_error("--slower '%s': expected milliseconds from 0.001 to 3600000",
				    arg);
		break;
	case OPT_STACK:
		env->slow_stacks = true;
		break;
	case OPT_REGION:
		if (parse_region_shift(arg, &env->region_shift))
			usage_error("--region '%s': expected a power of two from 4K to 1T", arg);
		break;
	case 'v':
		env->verbose = true;
		break;
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case ARGP_KEY_ARG:
		usage_error("unexpected argument '%s' (see --help)", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int top_parse_args(int argc, char **argv, struct top_env *env)
{
	static const struct argp argp = {options, parse_opt, NULL, doc, NULL, NULL, NULL};

	env->delay = 1;
	env->sort = SORT_FAULTS;
	env->command_line = sysinfo_join_argv(argc, argv);
	cli_parse(&argp, argc, argv, 0, env);
	if (!isatty(STDOUT_FILENO))
		env->batch = true; /* a pipe or a file wants plain frames */
	if (env->slow_stacks && !env->slower_ns)
		usage_error("--stack: shows where slow faults waited; give --slower MS too");
	if (env->per_vcpu && !env->batch)
		usage_error("--per-vcpu is for batch mode (-b): on the screen, Enter on a VM");
	return 0;
}
