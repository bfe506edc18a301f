// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "kvmmmu_metrics.h"
#include "log.h"
#include "parse.h"
#include "session_args.h"
#include "sysinfo.h"

enum {
	OPT_PER_VCPU = 1000,
	OPT_METRIC,
	OPT_CSV,
	OPT_LABEL,
	OPT_WAIT,
	OPT_ATTRIBUTION,
	OPT_VCPU,
	OPT_SLOWER,
	OPT_REGION,
	OPT_STACK,
};

const char *argp_program_version = "kvmmmu-hist " KVMMMU_VERSION;

/* the histograms' --metric words, from the catalogue: ", fault_ns, fast_path_ns, ..." */
#define HIST_METRIC(id, name, words, help) ", " name
/* what the opt-in metrics cost, for --help (docs/performance.md has the figures) */
#define METRICS_COST                                                                               \
	"All but memslot, memslot_ns, events, phases, regions and the phase_* histograms by "      \
	"default. They cost: memslot and memslot_ns (memslot lookups per fault and their time; "   \
	"function probes only) two program runs a memslot lookup, 1 a fault under the TDP MMU "    \
	"and 7 or more under shadow paging; regions (faults per memslot and guest-physical "       \
	"region, --region) a hash update a fault; phases (where each fault's time goes: the "      \
	"guest walk, the host page, mmu_lock, the mapping, the rest), with function probes, two "  \
	"more function pairs (the walk, the host page) and up to five clock reads a fault, and "   \
	"with tracepoints an event per guest page-table level.\n"
static const char doc[] =
	"Summarize KVM MMU page faults per VM and vCPU: outcomes (RET_PF_*), paths and "
	"latency histograms.\n"
	"\n"
	"USAGE: kvmmmu-hist [-p PID|NAME]... [--vcpu N] [--per-vcpu] [-m|-u] [-T] "
	"[--metric LIST] [--slower MS [--stack]] [--region SIZE] [--csv FILE|-] [--label TEXT] "
	"[interval "
	"[count]] [-d SECS] "
	"[-- COMMAND ARGS...]\n"
	"\v"
	"METRICS (--metric, comma-separated; 'default' is what is shown without it, 'all' "
	"everything): outcomes, paths, access, levels, memslot, events, kvm_stats, mmu_lock, mmu, "
	"timeline, phases, regions" KVMMMU_HISTS(
		HIST_METRIC) ". " METRICS_COST "\n"
			     "EXAMPLES:\n"
			     "    kvmmmu-hist                      # all VMs, until Ctrl-C\n"
			     "    kvmmmu-hist --pid qemu 5         # VMs whose name matches "
			     "'qemu', every 5 s\n"
			     "    kvmmmu-hist -p 1234 --per-vcpu   # one VM, per vCPU\n"
			     "    kvmmmu-hist --metric default,memslot  # and memslot lookups\n"
			     "    kvmmmu-hist -u --csv run.csv -- kvmmmu-load --vcpus 2\n"
			     "    kvmmmu-hist -- ./start-vm.sh     # the command and every process "
			     "it starts\n"
			     "    kvmmmu-hist --probe-mode tracepoint -d 10\n"
			     "    kvmmmu-hist --sample 16          # counts exact, 1 fault in 16 "
			     "timed: cheaper\n"
			     "    kvmmmu-hist --slower 1           # every fault over 1 ms, where "
			     "its time went\n"
			     "    kvmmmu-hist --slower 1 --stack   # ... and where it slept\n";

static const struct argp_option options[] = {
	SESSION_ARGP_OPTIONS("Trace only"),
	{"wait", OPT_WAIT, NULL, 0, "Keep waiting when no process matches -p yet", 0},
	{"vcpu", OPT_VCPU, "N", 0, "Show only vCPU N", 0},
	{"per-vcpu", OPT_PER_VCPU, NULL, 0, "Show every vCPU, not only the VM totals", 0},
	{"milliseconds", 'm', NULL, 0, "Histograms in milliseconds", 0},
	{"microseconds", 'u', NULL, 0, "Histograms in microseconds", 0},
	{"timestamp", 'T', NULL, 0, "Print a timestamp with each interval", 0},
	{"metric", OPT_METRIC, "LIST", 0, "Sections to show (see METRICS)", 0},
	{"region", OPT_REGION, "SIZE", 0,
	 "Hot regions of SIZE (a power of two, 4K to 1T; default 1G): faults per memslot and "
	 "guest-physical region (the regions metric)",
	 0},
	{"slower", OPT_SLOWER, "MS", 0,
	 "Print each fault of MS milliseconds or more (decimals allowed) as it ends: VM, vCPU, "
	 "GPA, access, levels, path, outcome and each phase's time",
	 0},
	{"stack", OPT_STACK, NULL, 0,
	 "With --slower: and where each slow fault waited longest off the CPU (asleep or "
	 "preempted), as a kernel stack",
	 0},
	{"csv", OPT_CSV, "FILE", 0,
	 "Also write kvmmmu CSV (v3, docs/csv.md) to FILE ('-' for stdout)", 0},
	{"label", OPT_LABEL, "TEXT", 0, "Label recorded in the CSV metadata", 0},
	{"duration", 'd', "SECS", 0, "Trace for SECS seconds", 0},
	{"attribution", OPT_ATTRIBUTION, "HOW", 0,
	 "How threads map to vCPUs: auto (BPF, then /proc) or proc", 0},
	{"verbose", 'v', NULL, 0, "Show libbpf's messages", 0},
	{NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0},
	{},
};

#define usage_error(state, fmt, ...)                                                               \
	do {                                                                                       \
		elog(fmt, ##__VA_ARGS__);                                                          \
		exit(2);                                                                           \
	} while (0)

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct hist_env *env = state->input;
	uint64_t v;
	const char *bad;
	int err;

	if (session_args_parse(&env->session, key, arg))
		return 0;
	switch (key) {
	case ARGP_KEY_INIT:
		cli_key_init(state);
		break;
	case OPT_WAIT:
		env->wait = true;
		break;
	case OPT_VCPU:
		if (parse_u64_range(arg, 0, 4095, &v))
			usage_error(state, "--vcpu '%s': expected a vCPU id from 0 to 4095", arg);
		env->vcpu = (int)v;
		break;
	case OPT_PER_VCPU:
		env->per_vcpu = true;
		break;
	case 'm':
	case 'u':
		/* one unit: the last of two would win silently */
		if (env->unit_ns != 1 && env->unit_ns != (key == 'm' ? 1e6 : 1e3))
			usage_error(state,
				    "-m and -u: give one unit (milliseconds or microseconds)");
		env->unit_ns = key == 'm' ? 1e6 : 1e3;
		env->unit = key == 'm' ? "msecs" : "usecs";
		break;
	case 'T':
		env->timestamp = true;
		break;
	case OPT_METRIC:
		err = render_parse_metrics(arg, env->show, &bad);
		if (err == -EINVAL && !*bad)
			usage_error(state, "--metric '%s': an empty name in the list", arg);
		else if (err == -EINVAL)
			usage_error(state, "--metric: unknown metric '%s' (see --help)", bad);
		else if (err)
			usage_error(state, "--metric: %s", strerror(-err));
		break;
	case OPT_CSV:
		env->csv_path = arg;
		break;
	case OPT_LABEL:
		env->label = arg;
		break;
	case OPT_REGION:
		if (parse_region_shift(arg, &env->region_shift))
			usage_error(state, "--region '%s': expected a power of two from 4K to 1T",
				    arg);
		break;
	case OPT_SLOWER:
		if (parse_millis_ns(arg, &env->slower_ns))
			usage_error(state,
				    "--slower '%s': expected milliseconds from 0.001 to 3600000",
				    arg);
		break;
	case OPT_STACK:
		env->slow_stacks = true;
		break;
	case 'd':
		if (parse_seconds(arg, &env->duration))
			usage_error(state, "-d '%s': expected " PARSE_SECONDS_RANGE, arg);
		break;
	case OPT_ATTRIBUTION:
		if (!strcmp(arg, "auto"))
			env->attribution = ATTRIBUTE_AUTO;
		else if (!strcmp(arg, "proc"))
			env->attribution = ATTRIBUTE_PROC;
		else
			usage_error(state, "--attribution '%s': expected auto or proc", arg);
		break;
	case 'v':
		env->verbose = true;
		break;
	case 'h': /* asked for: stdout, as --help */
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num == 0) {
			if (parse_seconds(arg, &env->interval))
				usage_error(state, "interval '%s': expected " PARSE_SECONDS_RANGE,
					    arg);
		} else if (state->arg_num == 1) {
			if (parse_u64_range(arg, 1, 1000000000, &v))
				usage_error(state, "count '%s': expected a positive integer", arg);
			env->count = (long)v;
		} else {
			usage_error(state, "unexpected argument '%s' (a command goes after --)",
				    arg);
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int hist_parse_args(int argc, char **argv, struct hist_env *env)
{
	static const struct argp argp = {options, parse_opt, NULL, doc, NULL, NULL, NULL};
	int end = argc;

	env->vcpu = -1;
	env->unit_ns = 1;
	env->unit = "nsecs";
	render_parse_metrics(RENDER_DEFAULT_METRICS, env->show, &(const char *){NULL});
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			end = i;
			if (i + 1 == argc) {
				elog("nothing after '--': expected a command");
				exit(2);
			}
			env->command = &argv[i + 1];
			break;
		}
	}
	env->command_line = sysinfo_join_argv(argc, argv);
	cli_parse(&argp, end, argv, ARGP_IN_ORDER, env);
	if (env->region_shift)
		env->show[SECTION_REGIONS] = true; /* --region SIZE asks for them */
	if (env->slow_stacks && !env->slower_ns) {
		elog("--stack: shows where slow faults waited; give --slower MS too");
		exit(2);
	}
	return 0;
}
