// SPDX-License-Identifier: GPL-2.0
/*
 * The faults source's threads (source_faults.h): their figures read into
 * the model, exited threads' kept, a process's entries freed when it goes,
 * and the map walk that stands in for lost thread news.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "source_faults.h" /* first: the skeleton needs kvmmmu.h's types */
#include "array.h"
#include "faults.skel.h"
#include "map_iter.h"
#include "settle.h"

/* The process's VMs are gone: their mmu_lock slots are free for others. */
static void forget_mmu_locks(struct faults_source *fs, __u32 tgid)
{
	for (size_t i = 0; fs->lock_table && i < KVMMMU_LOCK_SLOTS; i++) {
		struct kvmmmu_lock_slot *slot = &fs->lock_table->slots[i];

		if (slot->lock && slot->tgid == tgid)
			__atomic_store_n(&slot->lock, 0, __ATOMIC_RELAXED);
	}
}

/* The process's VMs are gone: their births go too (the map is LRU, but need not be pushed). */
static void forget_births(struct faults_source *fs, __u32 tgid)
{
	int fd = bpf_map__fd(fs->skel->maps.vm_births), more;
	__u64 key, next, gone[64];
	struct kvmmmu_vm_birth b;
	size_t n = 0;

	for (more = !bpf_map_get_next_key(fd, NULL, &key); more && n < 64; key = next) {
		more = !bpf_map_get_next_key(fd, &key, &next);
		if (!bpf_map_lookup_elem(fd, &key, &b) && b.tgid == tgid)
			gone[n++] = key;
	}
	for (size_t i = 0; i < n; i++) /* not while walking the keys */
		bpf_map_delete_elem(fd, &gone[i]);
}

/*
 * KEY exited: keep its last figures in user space and free its entry, so
 * that a long run with VMs coming and going never fills the map.
 */
static void retire_thread(struct faults_source *fs, const struct kvmmmu_thread_key *key)
{
	int fd = bpf_map__fd(fs->skel->maps.thread_stats);
	struct retired_thread *r;

	r = array_grow(fs->retired, fs->n_retired + 1, &fs->cap_retired, sizeof(*r));
	if (r) {
		fs->retired = r;
		r = &fs->retired[fs->n_retired];
		if (!bpf_map_lookup_elem(fd, key, &r->stats) && r->stats.id.ready) {
			r->key = *key;
			fs->n_retired++;
			/* its news may have been lost: name it now, or -p NAME never sees its VM */
			if (!threads_known(fs->threads, (int)key->tgid, (int)key->tid))
				threads_note(fs->threads, (int)key->tgid, (int)key->tid,
					     &r->stats.id, false);
		}
	}
	bpf_map_delete_elem(fd, key);
	bpf_map_delete_elem(bpf_map__fd(fs->skel->maps.wait_stacks), key);
}

void faults_source_retire(void *ctx, const struct kvmmmu_thread_key *key, bool gone)
{
	struct faults_source *fs = ctx;
	struct kvmmmu_thread_key k, next;
	int fd = bpf_map__fd(fs->skel->maps.thread_stats), more;

	if (!gone) {
		retire_thread(fs, key);
		return;
	}
	/* every entry of the process left: a thread whose exit news was lost */
	for (more = !bpf_map_get_next_key(fd, NULL, &k); more; k = next) {
		more = !bpf_map_get_next_key(fd, &k, &next);
		if (k.tgid == key->tgid)
			retire_thread(fs, &k);
	}
	forget_mmu_locks(fs, key->tgid);
	forget_births(fs, key->tgid);
	bpf_map_delete_elem(bpf_map__fd(fs->skel->maps.seen_procs), &key->tgid);
}

void faults_source_scan(struct faults_source *fs)
{
	int fd = bpf_map__fd(fs->skel->maps.thread_stats);
	struct kvmmmu_thread_key k, next, *dead = NULL;
	struct kvmmmu_thread_stats *s = malloc(sizeof(*s));
	size_t n_dead = 0;
	int more;

	if (!s)
		return;
	for (more = !bpf_map_get_next_key(fd, NULL, &k); more; k = next) {
		more = !bpf_map_get_next_key(fd, &k, &next);
		if (!threads_known(fs->threads, (int)k.tgid, (int)k.tid) &&
		    !bpf_map_lookup_elem(fd, &k, s) && s->id.ready)
			threads_note(fs->threads, (int)k.tgid, (int)k.tid, &s->id, true);
		if (syscall(SYS_tgkill, k.tgid, k.tid, 0) && errno == ESRCH) {
			struct kvmmmu_thread_key *d = realloc(dead, (n_dead + 1) * sizeof(*d));

			if (d) {
				dead = d;
				dead[n_dead++] = k;
			}
		}
	}
	for (size_t i = 0; i < n_dead; i++) /* not while walking the keys */
		threads_exited(fs->threads, &dead[i],
			       kill((pid_t)dead[i].tgid, 0) && errno == ESRCH);
	free(dead);
	free(s);
}

/* FINAL: the last reading, SETTLED what settle_pending() saw (NULL: nothing is in flight). */
static void add_thread(struct faults_source *fs, struct model *m, const struct kvmmmu_thread_key *k,
		       const struct kvmmmu_thread_stats *s, bool final,
		       const struct settle *settled)
{
	static struct figures f; /* large: off the stack */

	memset(&f, 0, sizeof(f));
	memcpy(f.counters, s->counters, sizeof(f.counters));
	memcpy(f.ret_pf, s->ret_pf, sizeof(f.ret_pf));
	memcpy(f.outcomes, s->outcomes, sizeof(f.outcomes));
	memcpy(f.hist, s->hist, sizeof(f.hist));
	memcpy(f.lock_wait, s->lock_wait, sizeof(f.lock_wait));
	/*
	 * A request no SPTE followed, unless in flight (settle_pending()): as
	 * resolve_pending() would (the TDP MMU traces its spurious faults).
	 */
	if (final && s->st.pending && !s->st.prefetch && !fs->func_mode && !fs->done_event &&
	    !settle_in_flight(settled, k, s->counters[KVMMMU_SPTE_REQUESTED])) {
		int ret = ret_pf_value(
			&fs->ret_pf, kvmmmu_unset_request_is_retry(&s->st) ? "retry" : "spurious");
		int path = kvmmmu_model_path(&s->st);

		if (ret >= 0) {
			f.ret_pf[ret]++;
			f.outcomes[path][ret]++;
			f.counters[KVMMMU_PATH_FAST + path]++;
		}
	}
	threads_add_figures(fs->threads, m, k, &s->id, &f);
}

struct read_ctx {
	struct faults_source *fs;
	struct model *m;
	bool final;
	const struct settle *settled;
};

static int read_one(const void *key, const void *value, void *ctx)
{
	const struct kvmmmu_thread_stats *s = value;
	struct read_ctx *r = ctx;

	if (s->id.ready)
		add_thread(r->fs, r->m, key, s, r->final, r->settled);
	return 0;
}

int faults_source_read(struct faults_source *fs, struct model *m, bool final)
{
	int fd = bpf_map__fd(fs->skel->maps.thread_stats), err;
	static struct settle settled; /* large: off the stack */
	struct read_ctx r = {fs, m, final, &settled};

	settled.n = 0;
	if (final && !fs->func_mode) {
		struct kvmmmu_thread_stats *s = malloc(sizeof(*s));

		if (!s)
			return -ENOMEM;
		settle_pending(fd, s, &settled);
		free(s);
	}
	err = map_each(fd, sizeof(struct kvmmmu_thread_key), sizeof(struct kvmmmu_thread_stats),
		       read_one, &r);
	/* exited threads: nothing follows their last event */
	for (size_t i = 0; i < fs->n_retired; i++)
		add_thread(fs, m, &fs->retired[i].key, &fs->retired[i].stats, true, NULL);
	return err;
}

void faults_source_forget(struct faults_source *fs, int pid)
{
	size_t kept = 0;

	faults_source_forget_regions(fs, pid);
	for (size_t i = 0; i < fs->n_retired; i++)
		if ((int)fs->retired[i].key.tgid != pid)
			fs->retired[kept++] = fs->retired[i];
	fs->n_retired = kept;
	if (!kept) { /* 8 KiB a thread: a burst's worth is not kept for ever */
		free(fs->retired);
		fs->retired = NULL;
		fs->cap_retired = 0;
	}
}
