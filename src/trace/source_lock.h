/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mmu_lock source: bpf/mmu_lock.bpf.c, waits for kvm->mmu_lock by mode,
 * inside faults and elsewhere (lock:contention_begin/end, or kprobes on the
 * qrwlock slow paths before 5.19).
 */
#ifndef KVMMMU_SOURCE_LOCK_H
#define KVMMMU_SOURCE_LOCK_H

#include <stdbool.h>

#include "attach.h"
#include "model.h"
#include "source.h"
#include "threads.h"

struct mmu_lock_bpf;

struct retired_lock {
	struct kvmmmu_thread_key key;
	struct kvmmmu_lock_stats stats;
};

struct lock_source {
	struct mmu_lock_bpf *skel;
	struct attach_links links;
	struct probe_status probe;
	struct retired_set retired; /* of struct retired_lock */
	bool ok;		    /* loaded and attached: waits are measured */
};

/*
 * Opens and attaches what this kernel allows, registering its exit hook
 * with THREADS; on failure the probe says why and the rest goes on.
 */
int lock_source_open(struct lock_source *l, const struct source_env *env, struct threads *threads);
const struct kvmmmu_health *lock_source_health(const struct lock_source *l);
/* Every thread's waits outside faults into M (those inside are the faults object's). */
int lock_source_read(struct lock_source *l, struct threads *threads, struct model *m);
void lock_source_forget(struct lock_source *l, int pid);
void lock_source_close(struct lock_source *l);

#endif
