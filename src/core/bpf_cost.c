// SPDX-License-Identifier: GPL-2.0
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h" /* first: the skeletons need kvmmmu.h's types */
#include "bpf_cost.h"
#include "faults.skel.h"
#include "mmu_events.skel.h"
#include "mmu_lock.skel.h"

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

void bpf_cost_restore(void)
{
	if (was >= 0 && !write_setting(was))
		was = -1;
}

bool bpf_cost_enable(void)
{
	int now = read_setting();

	if (now == 1)
		return true;
	if (now != 0 || write_setting(1))
		return false;
	was = 0;
	atexit(bpf_cost_restore);
	return true;
}

static __u64 object_ns(const struct bpf_object *obj)
{
	struct bpf_program *p;
	__u64 ns = 0;

	if (!obj)
		return 0;
	bpf_object__for_each_program (p, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			ns += info.run_time_ns;
	}
	return ns;
}

__u64 bpf_cost_run_ns(const struct session *s)
{
	return object_ns(s->c.skel ? s->c.skel->obj : NULL) +
	       object_ns(s->extras.lock ? s->extras.lock->obj : NULL) +
	       object_ns(s->extras.events ? s->extras.events->obj : NULL);
}
