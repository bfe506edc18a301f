// SPDX-License-Identifier: GPL-2.0
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h" /* first: the skeletons need kvmmmu.h's types */
#include "bpf_cost.h"
#include "faults.skel.h"
#include "mmu_events.skel.h"
#include "mmu_lock.skel.h"
#include "prog_info.h"

#define SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

static int was = -1; /* the setting we changed, -1: untouched */

static int read_setting(void)
{
	FILE *f = fopen(SYSCTL, "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_setting(int v)
{
	FILE *f = fopen(SYSCTL, "we");
	int err;

	if (!f)
		return -1;
	err = fprintf(f, "%d\n", v) < 0;
	return fclose(f) || err ? -1 : 0;
}

static int stats_fd = -1; /* BPF_ENABLE_STATS: statistics on while it is open */

void bpf_cost_restore(void)
{
	if (stats_fd >= 0) {
		close(stats_fd);
		stats_fd = -1;
	}
	if (was >= 0 && !write_setting(was))
		was = -1;
}

bool bpf_cost_enable(void)
{
	int now = read_setting();

	if (now == 1 && stats_fd < 0)
		return true;
	if (stats_fd >= 0)
		return true;
	/*
	 * An fd that keeps them on (5.8+) is put back by the kernel however we
	 * exit, SIGKILL included; the sysctl is the fallback.
	 */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd >= 0)
		return true;
	if (now != 0 || write_setting(1))
		return false;
	was = 0;
	atexit(bpf_cost_restore);
	return true;
}

__u64 bpf_cost_run_ns(const struct session *s)
{
	struct prog_info_sum sum = {};

	faults_source_prog_info(&s->c.faults, &sum);
	prog_info_add(s->c.lock.skel ? s->c.lock.skel->obj : NULL, &sum);
	prog_info_add(s->c.events.skel ? s->c.events.skel->obj : NULL, &sum);
	return sum.run_time_ns;
}
