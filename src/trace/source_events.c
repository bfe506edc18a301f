// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "source_events.h" /* first: the skeleton needs kvmmmu.h's types */
#include "log.h"
#include "mmu_events.skel.h"
#include "sysinfo.h"
#include "tracefs.h"

#define EVENTS_PROG(name) SKEL_PROG(mmu_events_bpf, name)

/* The MMU lifecycle tracepoints, each with its tp_btf and raw_tp programs. */
static const struct {
	const char *group, *event;
	size_t progs[N_PROG_SLOTS];
} lifecycle_tps[] = {
#define LIFECYCLE_TP(e)                                                                            \
	{                                                                                          \
		"kvmmmu", #e,                                                                      \
		{                                                                                  \
			[SLOT_TP_BTF] = EVENTS_PROG(e##_btf), [SLOT_RAW_TP] = EVENTS_PROG(e##_raw) \
		}                                                                                  \
	}
	LIFECYCLE_TP(kvm_mmu_get_page),	       LIFECYCLE_TP(kvm_mmu_prepare_zap_page),
	LIFECYCLE_TP(kvm_mmu_sync_page),       LIFECYCLE_TP(kvm_mmu_unsync_page),
	LIFECYCLE_TP(kvm_mmu_split_huge_page), LIFECYCLE_TP(kvm_mmu_zap_all_fast),
#undef LIFECYCLE_TP
};
#define N_LIFECYCLE (sizeof(lifecycle_tps) / sizeof(lifecycle_tps[0]))

/* The functions it probes, with their programs. */
static const struct {
	const char *func;
	size_t progs[N_PROG_SLOTS];
} functions[] = {
	{"kvm_mmu_load",
	 {[SLOT_FENTRY] = EVENTS_PROG(kvm_mmu_load_fentry),
	  [SLOT_FEXIT] = EVENTS_PROG(kvm_mmu_load_fexit),
	  [SLOT_KPROBE] = EVENTS_PROG(kvm_mmu_load_kprobe),
	  [SLOT_KRETPROBE] = EVENTS_PROG(kvm_mmu_load_kretprobe)}},
	{"kvm_mmu_free_roots",
	 {[SLOT_FENTRY] = EVENTS_PROG(kvm_mmu_free_roots_fentry),
	  [SLOT_KPROBE] = EVENTS_PROG(kvm_mmu_free_roots_kprobe)}},
};
#define N_FUNCS (sizeof(functions) / sizeof(functions[0]))

static struct probe_status *new_probe(struct events_source *x, const char *group, const char *name)
{
	struct probe_status *p = &x->probes[x->n_probes++];

	memset(p, 0, sizeof(*p));
	p->group = group;
	p->name = name;
	p->wanted = true;
	return p;
}

/*
 * A traced thread exited (threads_retire_fn): keep its figures, free its
 * entries. GONE: its whole process has: every entry of it goes, and its
 * VMs' memslots.
 */
static void retire(void *ctx, const struct kvmmmu_thread_key *key, bool gone)
{
	struct events_source *x = ctx;
	int stats = bpf_map__fd(x->skel->maps.mmu_stats);
	int slots = bpf_map__fd(x->skel->maps.slot_flags), more;
	struct { /* bpf/mmu_events.bpf.c's slot_key */
		__u32 tgid, slot;
		__u64 kvm, kvm_born;
	} k, next;

	if (!gone) {
		retired_add(&x->retired, stats, key);
		bpf_map_delete_elem(bpf_map__fd(x->skel->maps.calls), &key->tid);
		return;
	}
	retired_add_process(&x->retired, stats, key->tgid);
	for (more = !bpf_map_get_next_key(slots, NULL, &k); more; k = next) {
		more = !bpf_map_get_next_key(slots, &k, &next);
		if (k.tgid == key->tgid)
			bpf_map_delete_elem(slots, &k);
	}
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct events_source *x = ctx;
	const struct kvmmmu_event *e = data;

	if (len < sizeof(*e))
		return 0;
	return timeline_append(&x->timeline, e,
			       threads_vm_index(x->threads, (int)e->tgid, e->kvm, e->kvm_born),
			       (double)e->ts_ns / 1e9 + x->mono_to_wall);
}

/* The probes and their programs, planned; PP: each probe's (the ioctl pair as two). */
static void plan(struct events_source *x, const struct source_env *env, const bool raw[N_LIFECYCLE],
		 struct probe_progs pp[N_LIFECYCLE + N_FUNCS + 2], struct probe_status **probe)
{
	size_t n = 0;

	x->n_probes = 0;
	for (size_t i = 0; i < N_LIFECYCLE; i++, n++) {
		struct probe_status *p =
			new_probe(x, lifecycle_tps[i].group, lifecycle_tps[i].event);

		p->kind = attach_tp_btf_usable(env->engine, p->name) && !raw[i] ? ATTACH_TP_BTF
										: ATTACH_RAW_TP;
		probe_progs_of(&pp[n], x->skel, lifecycle_tps[i].progs);
		probe_progs_plan(&pp[n], p->kind);
		probe[n] = p;
	}
	/* the ioctls: classic tracepoints (raw_tp is the closest kind we name) */
	probe[n] = probe[n + 1] = new_probe(x, "syscalls", "sys_{enter,exit}_ioctl");
	probe[n]->kind = ATTACH_RAW_TP;
	if (!tracefs_has_event("syscalls", "sys_enter_ioctl")) {
		probe[n]->kind = ATTACH_NONE;
		snprintf(probe[n]->why, sizeof(probe[n]->why),
			 "no syscalls tracepoints (CONFIG_FTRACE_SYSCALLS): no dirty-log timeline");
	}
	pp[n] = (struct probe_progs){.prog = {[SLOT_RAW_TP] = x->skel->progs.sys_enter_ioctl}};
	pp[n + 1] = (struct probe_progs){.prog = {[SLOT_RAW_TP] = x->skel->progs.sys_exit_ioctl}};
	probe_progs_plan(&pp[n], probe[n]->kind);
	probe_progs_plan(&pp[n + 1], probe[n]->kind);
	n += 2;
	for (size_t i = 0; i < N_FUNCS; i++, n++) {
		struct probe_status *p = new_probe(x, NULL, functions[i].func);

		p->kind = attach_choose_function(env->engine, p->name, p->why, sizeof(p->why));
		probe_progs_of(&pp[n], x->skel, functions[i].progs);
		probe_progs_plan(&pp[n], p->kind);
		probe[n] = p;
	}
}

int events_source_open(struct events_source *x, const struct source_env *env,
		       struct threads *threads)
{
	struct probe_progs pp[N_LIFECYCLE + N_FUNCS + 2];
	struct probe_status *probe[N_LIFECYCLE + N_FUNCS + 2];
	bool raw[N_LIFECYCLE] = {};
	struct load_watch watch = {};
	struct bpf_program *refused;
	struct timespec mono;
	int err;

	memset(x, 0, sizeof(*x));
	x->threads = threads;
	x->retired.record_size = sizeof(struct retired_mmu);
	x->retired.value_offset = offsetof(struct retired_mmu, stats);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	x->mono_to_wall = sysinfo_now() - (mono.tv_sec + mono.tv_nsec / 1e9);
again:
	x->skel = mmu_events_bpf__open();
	if (!x->skel) {
		x->n_probes = 0; /* a plan of an earlier open would say nothing true */
		return -errno;
	}
	x->skel->rodata->filter_pids = env->opts->filter_pids;
	plan(x, env, raw, pp, probe);
	err = shared_maps_reuse(&env->maps, x->skel->maps.traced_pids, x->skel->maps.thread_stats,
				x->skel->maps.thread_news, x->skel->maps.seen_procs,
				x->skel->maps.mmu_locks, x->skel->maps.vm_births);
	thread_maps_size(&env->sizes, x->skel->maps.mmu_stats);
	bpf_map__set_max_entries(x->skel->maps.calls, env->sizes.max_threads);
	for (size_t i = 0; !err && i < N_LIFECYCLE; i++)
		if (probe[i]->kind == ATTACH_TP_BTF)
			err = load_watch_add(&watch, &pp[i]);
	log_libbpf_forget();
	if (!err)
		err = mmu_events_bpf__load(x->skel);
	refused = err ? load_watch_failed(&watch) : NULL;
	load_watch_free(&watch);
	for (size_t i = 0; refused && i < N_LIFECYCLE; i++) {
		if (!probe_progs_has(&pp[i], refused))
			continue;
		vlog("note: %s: the tp_btf program does not load here; using raw_tp",
		     lifecycle_tps[i].event);
		raw[i] = true; /* that one program as raw_tp, the object again */
		mmu_events_bpf__destroy(x->skel);
		x->skel = NULL;
		goto again;
	}
	if (!err)
		err = threads_add_hook(threads, retire, x);
	if (err) {
		for (size_t i = 0; i < x->n_probes; i++) {
			x->probes[i].kind = ATTACH_NONE;
			snprintf(x->probes[i].why, sizeof(x->probes[i].why),
				 "load failed: %s (-v shows libbpf's log)", strerror(-err));
		}
		return err;
	}
	for (size_t i = 0; i < N_LIFECYCLE + N_FUNCS + 2; i++)
		if (probe[i]->kind != ATTACH_NONE)
			attach_probe(env->engine, &x->links, &pp[i], 1, probe[i]);
	/* one ring-buffer set, one poll: the thread news wakes up for the timeline too */
	err = threads_add_ring(threads, bpf_map__fd(x->skel->maps.events), on_event, x);
	x->ok = !err;
	return err;
}

const struct kvmmmu_health *events_source_health(const struct events_source *x)
{
	return x->skel ? &x->skel->bss->health : NULL;
}

static void add(struct threads *threads, struct model *m, const struct kvmmmu_thread_key *k,
		const void *value)
{
	static struct figures f; /* large: off the stack */
	const struct kvmmmu_mmu_stats *s = value;

	if (!s->id.ready)
		return;
	memset(&f, 0, sizeof(f));
	memcpy(f.mmu, s->counters, sizeof(f.mmu));
	f.mmu_ns[DIRTY_LOG_ENABLE_NS] = s->enable_ns;
	f.mmu_ns[DIRTY_LOG_DISABLE_NS] = s->disable_ns;
	f.mmu_ns[DIRTY_LOG_GET_NS] = s->get_ns;
	f.mmu_ns[DIRTY_LOG_CLEAR_NS] = s->clear_ns;
	f.mmu_ns[ROOT_LOAD_NS] = s->root_load_ns;
	threads_add_figures(threads, m, k, &s->id, &f);
}

int events_source_read(struct events_source *x, struct threads *threads, struct model *m)
{
	return source_read_map(bpf_map__fd(x->skel->maps.mmu_stats),
			       sizeof(struct kvmmmu_mmu_stats), &x->retired, add, threads, m);
}

size_t events_source_forget(struct events_source *x, int pid, size_t before)
{
	retired_forget(&x->retired, pid);
	return timeline_forget(&x->timeline, pid, before);
}

void events_source_close(struct events_source *x)
{
	attach_links_destroy(&x->links);
	mmu_events_bpf__destroy(x->skel);
	retired_free(&x->retired);
	timeline_free(&x->timeline);
	memset(x, 0, sizeof(*x));
}

size_t events_source_tracepoints(struct source_tracepoint *out, size_t max)
{
	for (size_t i = 0; i < N_LIFECYCLE && i < max; i++)
		out[i] = (struct source_tracepoint){lifecycle_tps[i].group, lifecycle_tps[i].event,
						    "events"};
	return N_LIFECYCLE;
}
