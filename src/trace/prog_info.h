/* SPDX-License-Identifier: GPL-2.0 */
/* What the kernel keeps per BPF program, summed over one object's loaded programs. */
#ifndef KVMMMU_PROG_INFO_H
#define KVMMMU_PROG_INFO_H

#include <linux/types.h>

struct bpf_object;

struct prog_info_sum {
	__u64 run_time_ns;	/* only while kernel.bpf_stats_enabled is 1 */
	__u64 recursion_misses; /* runs skipped: the program was running on that CPU already */
};

/* Adds OBJ's programs' figures to SUM (nothing for a NULL object or unloaded programs). */
void prog_info_add(const struct bpf_object *obj, struct prog_info_sum *sum);

#endif
