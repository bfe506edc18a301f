// SPDX-License-Identifier: GPL-2.0
/*
 * The process_* families every Prometheus client library exports (Go's
 * and Python's alike), so that the exporter's own cost shows on the same
 * dashboards as any other's.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "exporter.h"
#include "log.h"
#include "proc_stat.h"
#include "prom_text.h"
#include "sysinfo.h"

/* The boot time, seconds since the epoch ("btime" in /proc/stat); -1 unknown. */
static double boot_time(void)
{
	char line[256];
	double t = -1;
	FILE *f = fopen("/proc/stat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lf", &t) == 1)
			break;
	if (f)
		fclose(f);
	return t;
}

/* Its fds: a stat() where the kernel tells (6.2+), else a readdir, which looks each one up. */
static long open_fds(void)
{
	long long told = sysinfo_open_fds(0);
	struct dirent *e;
	long n = 0;
	DIR *d;

	if (told > 0)
		return (long)told;
	d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

void process_metrics(struct prom_writer *w)
{
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE), fds = open_fds();
	struct proc_stat st;
	struct rlimit rl;
	double boot = boot_time();
	char line[1024];
	bool have = sysinfo_read_line("/proc/self/stat", line, sizeof(line)) &&
		    proc_stat_parse(line, &st) && ticks > 0;

	/* a figure not read is left out, never 0 */
	if (have) {
		prom_family(w, "process_cpu_seconds_total", PROM_COUNTER,
			    "Total user and system CPU time spent in seconds.");
		prom_double(w, NULL, 0, (double)(st.utime + st.stime) / (double)ticks);
		prom_family(w, "process_resident_memory_bytes", PROM_GAUGE,
			    "Resident memory size in bytes.");
		prom_u64(w, NULL, 0, (unsigned long long)st.rss * (unsigned long long)page);
		prom_family(w, "process_virtual_memory_bytes", PROM_GAUGE,
			    "Virtual memory size in bytes.");
		prom_u64(w, NULL, 0, st.vsize);
	}
	if (fds >= 0) {
		prom_family(w, "process_open_fds", PROM_GAUGE, "Number of open file descriptors.");
		prom_u64(w, NULL, 0, (unsigned long long)fds);
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		prom_family(w, "process_max_fds", PROM_GAUGE,
			    "Maximum number of open file descriptors.");
		prom_u64(w, NULL, 0, rl.rlim_cur);
	}
	if (have && boot >= 0) {
		prom_family(w, "process_start_time_seconds", PROM_GAUGE,
			    "Start time of the process since unix epoch in seconds.");
		prom_double(w, NULL, 0, boot + (double)st.starttime / (double)ticks);
	}
}

void process_fit_fd_limit(unsigned int *max_connections)
{
	/* the connections, and room for BPF maps, /proc reads, stats fds, logs */
	rlim_t need = (rlim_t)*max_connections + 256;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < need) {
		rl.rlim_cur =
			rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < need) {
		/* what the limit leaves, never more than asked; room for one client at least */
		rlim_t left = rl.rlim_cur > 256 + 1 ? rl.rlim_cur - 256 : 1;
		unsigned int fit = left < *max_connections ? (unsigned int)left : *max_connections;

		elog("warning: --web.max-connections %u needs %llu open files, the limit is %llu: "
		     "%u connections",
		     *max_connections, (unsigned long long)need, (unsigned long long)rl.rlim_cur,
		     fit);
		*max_connections = fit;
	}
}
