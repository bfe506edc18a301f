// SPDX-License-Identifier: GPL-2.0
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "array.h"
#include "log.h"
#include "map_iter.h"
#include "sysinfo.h"

/*
 * Room for twice the threads the host has now, and then some: entries are
 * allocated only for traced processes' threads and freed as they exit, so
 * this bounds what a burst of new threads can take, not what a run keeps.
 */
static unsigned int default_max_threads(void)
{
	unsigned long running, threads = 0;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%*s %*s %*s %lu/%lu", &running, &threads) != 2)
			threads = 0;
		fclose(f);
	}
	threads = 2 * threads + 1024;
	return threads < 4096 ? 4096 : threads > 65536 ? 65536 : (unsigned int)threads;
}

void thread_maps_init(struct thread_maps *t, unsigned int max_threads)
{
	char release[128];

	t->max_threads = max_threads ? max_threads : default_max_threads();
	t->prealloc =
		!sysinfo_release_at_least(sysinfo_kernel_release(release, sizeof(release)), 6, 1);
	if (t->prealloc)
		vlog("note: kernel %s (before 6.1): per-thread maps preallocated, %d threads at "
		     "most",
		     release, KVMMMU_PREALLOC_THREADS);
}

void thread_maps_size(const struct thread_maps *t, struct bpf_map *map)
{
	if (!t->prealloc) {
		bpf_map__set_max_entries(map, t->max_threads);
		return;
	}
	bpf_map__set_map_flags(map, bpf_map__map_flags(map) & ~BPF_F_NO_PREALLOC);
	bpf_map__set_max_entries(map, t->max_threads < KVMMMU_PREALLOC_THREADS
					      ? t->max_threads
					      : KVMMMU_PREALLOC_THREADS);
}

int shared_maps_reuse(const struct shared_maps *m, struct bpf_map *traced_pids,
		      struct bpf_map *thread_stats, struct bpf_map *thread_news,
		      struct bpf_map *seen_procs, struct bpf_map *mmu_locks,
		      struct bpf_map *vm_births)
{
	int err = bpf_map__reuse_fd(traced_pids, m->traced_pids);

	/* the faults object's per-thread state says whether an event is inside a fault */
	if (!err)
		err = bpf_map__reuse_fd(thread_stats, m->thread_stats);
	if (!err)
		err = bpf_map__reuse_fd(thread_news, m->thread_news);
	if (!err)
		err = bpf_map__reuse_fd(seen_procs, m->seen_procs);
	if (!err)
		err = bpf_map__reuse_fd(vm_births, m->vm_births);
	return err ? err : bpf_map__reuse_fd(mmu_locks, m->mmu_locks);
}

void retired_add(struct retired_set *s, int map, const struct kvmmmu_thread_key *key)
{
	char *a = array_grow(s->records, s->n + 1, &s->cap, s->record_size);

	if (a) {
		s->records = a;
		a += s->n * s->record_size;
		if (!bpf_map_lookup_elem(map, key, a + s->value_offset)) {
			memcpy(a, key, sizeof(*key));
			s->n++;
		}
	}
	bpf_map_delete_elem(map, key);
}

void retired_add_process(struct retired_set *s, int map, __u32 tgid)
{
	struct kvmmmu_thread_key key, next;
	int more;

	for (more = !bpf_map_get_next_key(map, NULL, &key); more; key = next) {
		more = !bpf_map_get_next_key(map, &key, &next);
		if (key.tgid == tgid)
			retired_add(s, map, &key);
	}
}

void retired_forget(struct retired_set *s, int pid)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct kvmmmu_thread_key *k = retired_record(s, i);

		if ((int)k->tgid == pid)
			continue;
		if (kept != i)
			memcpy((char *)s->records + kept * s->record_size, k, s->record_size);
		kept++;
	}
	s->n = kept;
}

void retired_free(struct retired_set *s)
{
	free(s->records);
	s->records = NULL;
	s->n = s->cap = 0;
}

struct read_ctx {
	source_add_fn add;
	struct threads *threads;
	struct model *m;
};

static int read_one(const void *key, const void *value, void *ctx)
{
	struct read_ctx *r = ctx;

	r->add(r->threads, r->m, key, value);
	return 0;
}

int source_read_map(int map, size_t value_size, const struct retired_set *retired,
		    source_add_fn add, struct threads *threads, struct model *m)
{
	struct read_ctx r = {add, threads, m};
	int err = map_each(map, sizeof(struct kvmmmu_thread_key), value_size, read_one, &r);

	for (size_t i = 0; i < retired->n; i++) {
		const char *rec = retired_record(retired, i);

		add(threads, m, (const void *)rec, rec + retired->value_offset);
	}
	return err;
}
