// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "source_lock.h" /* first: the skeleton needs kvmmmu.h's types */
#include "ksyms.h"
#include "log.h"
#include "mmu_lock.skel.h"
#include "tracefs.h"

static void retire(void *ctx, const struct kvmmmu_thread_key *key, bool gone)
{
	struct lock_source *l = ctx;
	int map = bpf_map__fd(l->skel->maps.lock_stats);

	if (gone)
		retired_add_process(&l->retired, map, key->tgid);
	else
		retired_add(&l->retired, map, key);
}

int lock_source_open(struct lock_source *l, const struct source_env *env, struct threads *threads)
{
	struct probe_status *p = &l->probe;
	bool tp = tracefs_has_event("lock", "contention_begin");
	bool btf = attach_tp_btf_usable(env->engine, "contention_begin");
	bool kp = !tp && ksym_lookup(NULL, "queued_write_lock_slowpath") == KSYM_PRESENT &&
		  attach_kprobe_pmu();
	struct probe_progs pp[2];
	struct load_watch watch = {};
	int err;

	memset(l, 0, sizeof(*l));
	l->retired.record_size = sizeof(struct retired_lock);
	l->retired.value_offset = offsetof(struct retired_lock, stats);
	p->group = "lock";
	p->name = "contention_begin/end";
	p->wanted = true;
	if (!tp && !kp) {
		snprintf(p->why, sizeof(p->why),
			 "no lock:contention_* tracepoints (5.19+) and no kprobe on "
			 "queued_*_lock_slowpath");
		return -ENOENT;
	}
	p->kind = kp ? ATTACH_KPROBE : btf ? ATTACH_TP_BTF : ATTACH_RAW_TP;
	if (kp)
		p->name = "queued_{read,write}_lock_slowpath";
again:
	l->skel = mmu_lock_bpf__open();
	if (!l->skel) {
		err = -errno;
		p->kind = ATTACH_NONE;
		snprintf(p->why, sizeof(p->why), "open failed: %s", strerror(-err));
		return err;
	}
	l->skel->rodata->filter_pids = env->opts->filter_pids;
	l->skel->rodata->func_mode = env->func_mode;
	/*
	 * The object has both ways, each pair a wait's begin and end: the
	 * read-side slow path or contention_begin, the write side or
	 * contention_end. Only the chosen kind loads (and attaches).
	 */
	pp[0] = (struct probe_progs){
		.prog = {[SLOT_KPROBE] = l->skel->progs.queued_read_lock_slowpath_kprobe,
			 [SLOT_KRETPROBE] = l->skel->progs.queued_read_lock_slowpath_kretprobe,
			 [SLOT_TP_BTF] = l->skel->progs.contention_begin_btf,
			 [SLOT_RAW_TP] = l->skel->progs.contention_begin_raw}};
	pp[1] = (struct probe_progs){
		.prog = {[SLOT_KPROBE] = l->skel->progs.queued_write_lock_slowpath_kprobe,
			 [SLOT_KRETPROBE] = l->skel->progs.queued_write_lock_slowpath_kretprobe,
			 [SLOT_TP_BTF] = l->skel->progs.contention_end_btf,
			 [SLOT_RAW_TP] = l->skel->progs.contention_end_raw}};
	probe_progs_plan(&pp[0], p->kind);
	probe_progs_plan(&pp[1], p->kind);
	err = shared_maps_reuse(&env->maps, l->skel->maps.traced_pids, l->skel->maps.thread_stats,
				l->skel->maps.thread_news, l->skel->maps.seen_procs,
				l->skel->maps.mmu_locks, l->skel->maps.vm_births);
	thread_maps_size(&env->sizes, l->skel->maps.lock_stats);
	for (size_t i = 0; !err && p->kind == ATTACH_TP_BTF && i < 2; i++)
		err = load_watch_add(&watch, &pp[i]);
	log_libbpf_forget();
	if (!err)
		err = mmu_lock_bpf__load(l->skel);
	if (err && p->kind == ATTACH_TP_BTF && load_watch_failed(&watch)) {
		/* that tracepoint's tp_btf program does not load here: both as raw_tp */
		vlog("note: lock:contention_*: the tp_btf programs do not load here; using raw_tp");
		load_watch_free(&watch);
		mmu_lock_bpf__destroy(l->skel);
		l->skel = NULL;
		p->kind = ATTACH_RAW_TP;
		goto again;
	}
	load_watch_free(&watch);
	if (!err)
		err = threads_add_hook(threads, retire, l);
	if (err) {
		p->kind = ATTACH_NONE;
		snprintf(p->why, sizeof(p->why), "load failed: %s (-v shows libbpf's log)",
			 strerror(-err));
		return err;
	}
	err = attach_probe(env->engine, &l->links, pp, 2, p);
	l->ok = !err;
	return err;
}

const struct kvmmmu_health *lock_source_health(const struct lock_source *l)
{
	return l->skel ? &l->skel->bss->health : NULL;
}

static void add(struct threads *threads, struct model *m, const struct kvmmmu_thread_key *k,
		const void *value)
{
	static struct figures f; /* large: off the stack */
	const struct kvmmmu_lock_stats *s = value;

	if (!s->id.ready)
		return;
	memset(&f, 0, sizeof(f));
	memcpy(f.lock_other_waits, s->other_waits, sizeof(f.lock_other_waits));
	memcpy(f.lock_other_wait_ns, s->other_wait_ns, sizeof(f.lock_other_wait_ns));
	threads_add_figures(threads, m, k, &s->id, &f);
}

int lock_source_read(struct lock_source *l, struct threads *threads, struct model *m)
{
	return source_read_map(bpf_map__fd(l->skel->maps.lock_stats),
			       sizeof(struct kvmmmu_lock_stats), &l->retired, add, threads, m);
}

void lock_source_forget(struct lock_source *l, int pid)
{
	retired_forget(&l->retired, pid);
}

void lock_source_close(struct lock_source *l)
{
	attach_links_destroy(&l->links);
	mmu_lock_bpf__destroy(l->skel);
	retired_free(&l->retired);
	memset(l, 0, sizeof(*l));
}
