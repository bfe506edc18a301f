// SPDX-License-Identifier: GPL-2.0
/* Command-line parsing for kvmmmu-load: every bad input is one line and exit 2. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "load.h"
#include "log.h"
#include "parse.h"
#include "sysinfo.h"

#define MAX_COUNT 1000000 /* passes or dirty-log iterations: a typo guard */

static const char usage[] =
	"Generate a known KVM MMU fault load: a small VM whose vCPUs write one byte\n"
	"per 4 KiB page of their own memory, at CPL3, in 64-bit long mode.\n"
	"\n"
	"USAGE: kvmmmu-load [--vcpus N] [--mem SIZE] [--shared] [--guest-mode MODE]\n"
	"                   [--dirty-log ITERS] [--passes N] [--passes-after N]\n"
	"                   [--duration SECS] [--thp] [--reclaim MS] [--uffd] [--gmem]\n"
	"                   [--mmio N]\n"
	"                   [--access write|read|exec]\n"
	"                   [--thread-names STYLE] [--vms N] [--linger SECS]\n"
	"                   [--name NAME] [--no-stats-fds] [--dirty-log-on-signal]\n"
	"                   [--csv FILE|-]\n"
	"                   [--label TEXT] [-v] [-h] [-V] [--usage]\n"
	"\n"
	"Phases: a populate pass (every vCPU writes every page once), --passes N - 1 more\n"
	"write passes, then ITERS passes with dirty logging on, each followed by\n"
	"KVM_GET_DIRTY_LOG (and KVM_CLEAR_DIRTY_LOG when manual protection is available),\n"
	"then --passes-after N write passes with dirty logging off again.\n"
	"With --duration the last phase repeats until SECS have passed since the start.\n"
	"KVM's binary statistics for every vCPU and for the VM are printed at exit,\n"
	"also after Ctrl-C.\n"
	"\n"
	"OPTIONS:\n"
	"      --vcpus N          vCPUs, one thread each, named \"CPU N/KVM\" (default 1)\n"
	"      --mem SIZE         test memory per vCPU, e.g. 64M, 1G (default 64M)\n"
	"      --shared           all vCPUs write the same SIZE at once, as KVM's\n"
	"                         kvm_page_table_test does: faults collide, giving\n"
	"                         spurious faults and retries (no per-vCPU count then)\n"
	"      --guest-mode MODE  long (64-bit, default), pae, 32bit (2-level paging,\n"
	"                         4 MiB pages) or nonpaging: which of KVM's fault\n"
	"                         handlers the faults reach under shadow paging\n"
	"                         (32-bit modes: test memory at 1 GiB, 2 GiB at most;\n"
	"                         pae and 32bit need a host that runs 32-bit paging);\n"
	"                         or cr0wp: long mode at CPL0, turning CR0.WP off and\n"
	"                         on around every store (2 MMU role changes a page)\n"
	"      --dirty-log ITERS  write passes with dirty logging enabled (default 0)\n"
	"      --dirty-log-on-signal  before dirty logging, keep writing (a pass every\n"
	"                         10 ms) until SIGUSR1, as a migration starts on a VM\n"
	"                         that has run a while (with --dirty-log)\n"
	"      --passes N         write passes without dirty logging, populate included\n"
	"                         (default 1)\n"
	"      --passes-after N   write passes after dirty logging is turned off (with\n"
	"                         --dirty-log; default 0): with --thp, the faults that\n"
	"                         map huge again what the dirty log split\n"
	"      --duration SECS    repeat the last phase until SECS have passed\n"
	"      --reclaim MS       every MS ms, drop 1/8 of the test memory's pages\n"
	"                         (MADV_DONTNEED), as host reclaim or a balloon does:\n"
	"                         MMU-notifier zaps take mmu_lock for write while the\n"
	"                         vCPUs fault, and racing faults are retried\n"
	"      --uffd             test memory's pages supplied on first touch through\n"
	"                         userfaultfd (UFFDIO_COPY, by a host thread), as in a\n"
	"                         post-copy migration: each such fault waits in KVM's\n"
	"                         look-up of the host page\n"
	"      --gmem             test memory is a guest_memfd that kvmmmu-load maps\n"
	"                         (GUEST_MEMFD_FLAG_MMAP, INIT_SHARED; not Linux 6.12):\n"
	"                         KVM takes each page and its mapping level from\n"
	"                         guest_memfd (4 KiB folios: every SPTE is 4 KiB);\n"
	"                         not with --thp, --uffd, --reclaim or --dirty-log\n"
	"      --access KIND      how the guest touches each page: write (a store, the\n"
	"                         default), read (a load) or exec (a jump into it, its\n"
	"                         first bytes written by the host): faults of that\n"
	"                         access kind (long mode)\n"
	"      --mmio N           after each pass, N reads of a guest-physical page no\n"
	"                         memslot backs: KVM emulates each and exits with\n"
	"                         KVM_EXIT_MMIO, as a device's registers do (long mode)\n"
	"      --name NAME        the VM's name, given the way QEMU's -name gives it:\n"
	"                         tools read it from the command line (kvmmmu-hist -p NAME)\n"
	"      --no-stats-fds     keep no KVM binary stats fd open, as QEMU does between\n"
	"                         its QMP query-stats: tools fall back to KVM's debugfs\n"
	"                         (VM-wide figures); no statistics in the exit report\n"
	"      --thp              back test memory with transparent huge pages\n"
	"                         (default: MADV_NOHUGEPAGE, for reproducible counts)\n"
	"      --thread-names STYLE  name vCPU threads like qemu (\"CPU N/KVM\", default),\n"
	"                         firecracker (\"fc_vcpu N\") or plain (left unnamed), to\n"
	"                         test tools that map threads to vCPUs\n"
	"      --vms N            N VMs in this one process, made in turn as KVM's\n"
	"                         dirty_log_page_splitting_test makes two: each runs\n"
	"                         every phase with vCPU threads of its own and is\n"
	"                         destroyed before the next is made (default 1)\n"
	"      --linger SECS      after the last VM is destroyed, live on SECS more, as\n"
	"                         a VMM that outlives its VM (tools must let it go)\n"
	"      --csv FILE|-       write timings and KVM statistics as kvmmmu CSV v3;\n"
	"                         with '-' the CSV goes to stdout, the rest to stderr\n"
	"      --label TEXT       label recorded in the CSV metadata\n"
	"  -v, --verbose          print setup details\n"
	"  -h, --help             show this help\n"
	"      --usage            show the synopsis alone\n"
	"  -V, --version          print the version\n"
	"\n"
	"EXAMPLES:\n"
	"    kvmmmu-load                          # 1 vCPU populates 64 MiB\n"
	"    kvmmmu-load --vcpus 2 --mem 128M     # 2 vCPUs, 32769 faults each (+ the code page)\n"
	"    kvmmmu-load --dirty-log 3            # refault every page 3 more times\n"
	"    kvmmmu-load --dirty-log 1 --duration 60  # dirty-log faults for a minute\n"
	"    kvmmmu-load --thp --mem 1G           # 2 MiB mappings, few faults\n"
	"    kvmmmu-load --vcpus 4 --shared --dirty-log 3  # colliding faults\n"
	"    kvmmmu-load --csv run.csv --label baseline\n";

enum {
	OPT_VCPUS = 256,
	OPT_MEM,
	OPT_SHARED,
	OPT_GUEST_MODE,
	OPT_DIRTY_LOG,
	OPT_PASSES,
	OPT_PASSES_AFTER,
	OPT_DURATION,
	OPT_THP,
	OPT_RECLAIM,
	OPT_UFFD,
	OPT_GMEM,
	OPT_NAME,
	OPT_NO_STATS_FDS,
	OPT_DIRTY_LOG_ON_SIGNAL,
	OPT_CSV,
	OPT_LABEL,
	OPT_THREAD_NAMES,
	OPT_MMIO,
	OPT_ACCESS,
	OPT_VMS,
	OPT_LINGER,
	OPT_VERSION,
	OPT_USAGE,
};

static const struct option long_opts[] = {
	{"vcpus", required_argument, NULL, OPT_VCPUS},
	{"mem", required_argument, NULL, OPT_MEM},
	{"dirty-log", required_argument, NULL, OPT_DIRTY_LOG},
	{"passes", required_argument, NULL, OPT_PASSES},
	{"passes-after", required_argument, NULL, OPT_PASSES_AFTER},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"thp", no_argument, NULL, OPT_THP},
	{"reclaim", required_argument, NULL, OPT_RECLAIM},
	{"uffd", no_argument, NULL, OPT_UFFD},
	{"gmem", no_argument, NULL, OPT_GMEM},
	{"mmio", required_argument, NULL, OPT_MMIO},
	{"access", required_argument, NULL, OPT_ACCESS},
	{"vms", required_argument, NULL, OPT_VMS},
	{"linger", required_argument, NULL, OPT_LINGER},
	{"name", required_argument, NULL, OPT_NAME},
	{"no-stats-fds", no_argument, NULL, OPT_NO_STATS_FDS},
	{"dirty-log-on-signal", no_argument, NULL, OPT_DIRTY_LOG_ON_SIGNAL},
	{"shared", no_argument, NULL, OPT_SHARED},
	{"guest-mode", required_argument, NULL, OPT_GUEST_MODE},
	{"csv", required_argument, NULL, OPT_CSV},
	{"label", required_argument, NULL, OPT_LABEL},
	{"thread-names", required_argument, NULL, OPT_THREAD_NAMES},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{"usage", no_argument, NULL, OPT_USAGE},
	{},
};

static int parse_count(const char *opt, const char *arg, uint64_t min, uint64_t max,
		       unsigned int *out)
{
	uint64_t v;
	int err = parse_u64_range(arg, min, max, &v);

	if (err == -ERANGE) {
		elog("%s: '%s' is out of range (%llu..%llu)", opt, arg, (unsigned long long)min,
		     (unsigned long long)max);
		return -1;
	}
	if (err) {
		elog("%s: '%s' is not a number", opt, arg);
		return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

static int parse_mem(const char *arg, uint64_t *out)
{
	int err = parse_size(arg, out);

	if (err == -ERANGE) {
		elog("--mem: '%s' is too large", arg);
		return -1;
	}
	if (err) {
		elog("--mem: '%s' is not a size (examples: 64M, 1G, 4096)", arg);
		return -1;
	}
	if (!*out) {
		elog("--mem: the size must be greater than 0");
		return -1;
	}
	if (*out % LOAD_PAGE_SIZE) {
		elog("--mem: '%s' is not a multiple of 4 KiB, the guest's page size", arg);
		return -1;
	}
	return 0;
}

static int parse_duration(const char *opt, const char *arg, double *out)
{
	int err = parse_seconds(arg, out);

	if (err) {
		elog("%s: '%s' %s: expected " PARSE_SECONDS_RANGE, opt, arg,
		     err == -ERANGE ? "is out of range" : "is not a decimal number");
		return -1;
	}
	return 0;
}

static void report_bad_option(int opt, char **argv)
{
	const char *arg = argv[optind - 1];

	if (opt == ':')
		elog("option '%s' requires an argument (see --help)", arg);
	else if (optopt)
		elog("unrecognized option '-%c' (see --help)", optopt);
	else
		elog("unrecognized option '%s' (see --help)", arg);
}

int load_parse_args(int argc, char **argv, struct load_opts *o)
{
	int opt;

	memset(o, 0, sizeof(*o));
	o->vcpus = 1;
	o->mem = 64ULL << 20;
	o->passes = 1;
	o->vms = 1;

	opterr = 0; /* our own single-line messages */
	while ((opt = getopt_long(argc, argv, ":vhV", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_VCPUS:
			if (parse_count("--vcpus", optarg, 1, LOAD_MAX_VCPUS, &o->vcpus))
				return -1;
			break;
		case OPT_MEM:
			if (parse_mem(optarg, &o->mem))
				return -1;
			break;
		case OPT_DIRTY_LOG:
			if (parse_count("--dirty-log", optarg, 1, MAX_COUNT, &o->dirty_iters))
				return -1;
			break;
		case OPT_PASSES:
			if (parse_count("--passes", optarg, 1, MAX_COUNT, &o->passes))
				return -1;
			break;
		case OPT_PASSES_AFTER:
			if (parse_count("--passes-after", optarg, 1, MAX_COUNT, &o->passes_after))
				return -1;
			break;
		case OPT_DURATION:
			if (parse_duration("--duration", optarg, &o->duration))
				return -1;
			break;
		case OPT_UFFD:
			o->uffd = true;
			break;
		case OPT_GMEM:
			o->gmem = true;
			break;
		case OPT_THP:
			o->thp = true;
			break;
		case OPT_NO_STATS_FDS:
			o->no_stats_fds = true;
			break;
		case OPT_DIRTY_LOG_ON_SIGNAL:
			o->dirty_log_on_signal = true;
			break;
		case OPT_NAME:
			o->name = optarg; /* read from our command line by tools, as QEMU's -name */
			break;
		case OPT_RECLAIM:
			if (parse_count("--reclaim", optarg, 1, 60000, &o->reclaim_ms))
				return -1;
			break;
		case OPT_MMIO:
			if (parse_count("--mmio", optarg, 1, 1000000, &o->mmio_reads))
				return -1;
			break;
		case OPT_ACCESS:
			if (!strcmp(optarg, "write")) {
				o->access = ACCESS_WRITE;
			} else if (!strcmp(optarg, "read")) {
				o->access = ACCESS_READ;
			} else if (!strcmp(optarg, "exec")) {
				o->access = ACCESS_EXEC;
			} else {
				elog("--access '%s': expected write, read or exec", optarg);
				return -1;
			}
			break;
		case OPT_LINGER:
			if (parse_duration("--linger", optarg, &o->linger))
				return -1;
			break;
		case OPT_VMS:
			if (parse_count("--vms", optarg, 1, 64, &o->vms))
				return -1;
			break;
		case OPT_SHARED:
			o->shared = true;
			break;
		case OPT_GUEST_MODE:
			if (guest_mode_parse(optarg, &o->mode)) {
				elog("--guest-mode '%s': expected long, pae, 32bit, nonpaging or "
				     "cr0wp",
				     optarg);
				return -1;
			}
			break;
		case OPT_CSV:
			if (!*optarg) {
				elog("--csv: empty file name (use '-' for stdout)");
				return -1;
			}
			o->csv_path = optarg;
			break;
		case OPT_LABEL:
			o->label = optarg;
			break;
		case OPT_THREAD_NAMES:
			if (!strcmp(optarg, "qemu"))
				o->thread_names = THREAD_NAMES_QEMU;
			else if (!strcmp(optarg, "firecracker"))
				o->thread_names = THREAD_NAMES_FIRECRACKER;
			else if (!strcmp(optarg, "plain"))
				o->thread_names = THREAD_NAMES_PLAIN;
			else {
				elog("--thread-names '%s': expected qemu, firecracker or plain",
				     optarg);
				return -1;
			}
			break;
		case 'v':
			log_verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 'V': /* -V and --usage, as the other commands (argp) have them */
		case OPT_VERSION:
			printf("kvmmmu-load %s\n", KVMMMU_VERSION);
			return 1;
		case OPT_USAGE: {
			/* the synopsis alone: the USAGE paragraph of --help */
			const char *from = strstr(usage, "USAGE: "), *to = strstr(from, "\n\n");

			printf("%.*s\n", (int)(to - from), from);
			return 1;
		}
		default:
			report_bad_option(opt, argv);
			return -1;
		}
	}
	if (optind < argc) {
		elog("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	if (o->dirty_log_on_signal && !o->dirty_iters) {
		elog("--dirty-log-on-signal: needs --dirty-log (what the signal starts)");
		return -1;
	}
	if (o->dirty_log_on_signal && o->vms > 1) {
		elog("--dirty-log-on-signal: one VM only (which of --vms would the signal start?)");
		return -1;
	}
	if (o->passes_after && !o->dirty_iters) {
		elog("--passes-after: needs --dirty-log (passes after dirty logging is turned "
		     "off)");
		return -1;
	}
	if (o->access != ACCESS_WRITE && o->mode != GUEST_LONG) {
		elog("--access: long mode only (--guest-mode long)");
		return -1;
	}
	/* what reclaim drops reads back as zeroes: no jump to come back from */
	if (o->access == ACCESS_EXEC && o->reclaim_ms) {
		elog("--access exec: not with --reclaim (a dropped page's code is gone)");
		return -1;
	}
	/* the host writes each page's code first: none would be missing */
	if (o->uffd && (o->access == ACCESS_EXEC || o->thp)) {
		elog("--uffd: not with --access exec or --thp (it supplies 4 KiB pages of zeroes)");
		return -1;
	}
	/*
	 * guest_memfd's folios are its own (no THP, no userfaultfd; MADV_DONTNEED
	 * frees none of a file's pages), and KVM refuses dirty logging on its
	 * memslots (check_memory_region_flags())
	 */
	if (o->gmem && (o->thp || o->uffd || o->reclaim_ms || o->dirty_iters)) {
		elog("--gmem: not with --thp, --uffd, --reclaim or --dirty-log");
		return -1;
	}
	if (o->mmio_reads && o->mode != GUEST_LONG) {
		elog("--mmio: long mode only (--guest-mode long)");
		return -1;
	}
	if (!guest_mode_is_long(o->mode) &&
	    (o->shared ? o->mem : o->mem * o->vcpus) > TEST_MAX_32) {
		elog("--guest-mode %s: at most 2 GiB of test memory in all (below 4 GiB)",
		     guest_mode_name(o->mode));
		return -1;
	}
	return 0;
}
