/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_BPF_COST_H
#define KVMMMU_BPF_COST_H

/*
 * kvmmmu's own BPF cost: the run time of every program a session loaded,
 * from the kernel's per-program statistics. They are kept only while
 * kernel.bpf_stats_enabled is 1 (it costs two clock reads per program run),
 * so bpf_cost_enable() turns it on if it was off: with an fd that keeps it
 * on while open (BPF_ENABLE_STATS), else through the sysctl, put back at
 * exit.
 */
#include <stdbool.h>
#include <linux/types.h>

struct session;

/* Turns kernel.bpf_stats_enabled on if it was off (restored at exit); whether stats are on. */
bool bpf_cost_enable(void);
/* Puts kernel.bpf_stats_enabled back as it was (also done at exit). */
void bpf_cost_restore(void);
/* Nanoseconds all of S's programs have run so far (0 without statistics). */
__u64 bpf_cost_run_ns(const struct session *s);

#endif
