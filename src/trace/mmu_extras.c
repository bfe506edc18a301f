// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mmu_extras.h" /* first: the skeletons need kvmmmu.h's types */
#include "array.h"
#include "faults.skel.h"
#include "ksyms.h"
#include "log.h"
#include "mmu_events.skel.h"
#include "mmu_lock.skel.h"
#include "sysinfo.h"
#include "tracefs.h"

static const struct {
	const char *group, *event;
} lifecycle_tps[] = {
	{"kvmmmu", "kvm_mmu_get_page"},	       {"kvmmmu", "kvm_mmu_prepare_zap_page"},
	{"kvmmmu", "kvm_mmu_sync_page"},       {"kvmmmu", "kvm_mmu_unsync_page"},
	{"kvmmmu", "kvm_mmu_split_huge_page"}, {"kvmmmu", "kvm_mmu_zap_all_fast"},
};

static struct probe_status *new_probe(struct mmu_extras *x, const char *group, const char *name)
{
	struct probe_status *p = &x->probes[x->n_probes++];

	memset(p, 0, sizeof(*p));
	p->group = group;
	p->name = name;
	p->wanted = true;
	return p;
}

static int keep_link(struct mmu_extras *x, struct bpf_link *link)
{
	if (!link)
		return -errno;
	if (x->n_links == EXTRAS_MAX_LINKS) {
		bpf_link__destroy(link);
		return -E2BIG;
	}
	x->links[x->n_links++] = link;
	return 0;
}

/* Enables the tp_btf or raw_tp twin of EVENT in OBJ (raw_tp if RAW), recording the choice in P. */
static void choose_tp(struct bpf_object *obj, struct collector *c, struct probe_status *p, bool raw)
{
	char name[96];
	bool btf = kernel_btf_has_tp_btf(&c->kb, p->name) && !raw;
	struct bpf_program *bp;

	p->kind = btf ? ATTACH_TP_BTF : ATTACH_RAW_TP;
	snprintf(name, sizeof(name), "%s_btf", p->name);
	bp = bpf_object__find_program_by_name(obj, name);
	if (bp)
		bpf_program__set_autoload(bp, btf);
	snprintf(name, sizeof(name), "%s_raw", p->name);
	bp = bpf_object__find_program_by_name(obj, name);
	if (bp)
		bpf_program__set_autoload(bp, !btf);
}

static void attach_chosen(struct mmu_extras *x, struct bpf_object *obj, struct probe_status *p,
			  const char *const *progs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct bpf_program *bp = bpf_object__find_program_by_name(obj, progs[i]);
		int err;

		if (!bp || !bpf_program__autoload(bp))
			continue;
		err = keep_link(x, collector_attach_program(x->c, bp));
		if (err) {
			p->kind = ATTACH_NONE;
			snprintf(p->why, sizeof(p->why), "attach failed: %s", strerror(-err));
			return;
		}
	}
}

static void attach_tp(struct mmu_extras *x, struct bpf_object *obj, struct probe_status *p)
{
	char btf[96], raw[96];
	const char *progs[] = {btf, raw};

	snprintf(btf, sizeof(btf), "%s_btf", p->name);
	snprintf(raw, sizeof(raw), "%s_raw", p->name);
	attach_chosen(x, obj, p, progs, 2);
}

/*
 * The collector's thread news ring, its set of seen processes, its mmu_lock
 * table and the VMs' births, for this object too.
 */
static int share_maps(struct collector *c, struct bpf_map *news, struct bpf_map *seen,
		      struct bpf_map *locks, struct bpf_map *births)
{
	int err = bpf_map__reuse_fd(news, bpf_map__fd(c->skel->maps.thread_news));

	if (!err)
		err = bpf_map__reuse_fd(seen, bpf_map__fd(c->skel->maps.seen_procs));
	if (!err)
		err = bpf_map__reuse_fd(births, bpf_map__fd(c->skel->maps.vm_births));
	return err ? err : bpf_map__reuse_fd(locks, bpf_map__fd(c->skel->maps.mmu_locks));
}

/* Moves KEY's entry of MAP (VALUE_SIZE bytes) to the end of *ARRAY of N records of RECORD_SIZE. */
static void retire_entry(struct bpf_map *map, const struct kvmmmu_thread_key *key, void **array,
			 size_t *n, size_t *cap, size_t record_size, size_t value_offset)
{
	int fd = bpf_map__fd(map);
	char *a = array_grow(*array, *n + 1, cap, record_size);

	if (a) {
		*array = a;
		a += *n * record_size;
		if (!bpf_map_lookup_elem(fd, key, a + value_offset)) {
			memcpy(a, key, sizeof(*key));
			(*n)++;
		}
	}
	bpf_map_delete_elem(fd, key);
}

/* Retires every entry of TGID in the per-thread MAP (retire_entry's other arguments). */
static void retire_process(struct bpf_map *map, __u32 tgid, void **array, size_t *n, size_t *cap,
			   size_t record_size, size_t value_offset)
{
	struct kvmmmu_thread_key key, next;
	int fd = bpf_map__fd(map), more;

	for (more = !bpf_map_get_next_key(fd, NULL, &key); more; key = next) {
		more = !bpf_map_get_next_key(fd, &key, &next);
		if (key.tgid == tgid)
			retire_entry(map, &key, array, n, cap, record_size, value_offset);
	}
}

/*
 * A traced thread exited (collector_retire_fn): keep its figures, free its
 * entries. GONE: its whole process has, and KEY's tid is 0: every entry of
 * the process left (a thread whose exit news never came) goes too.
 */
static void retire(void *ctx, const struct kvmmmu_thread_key *key, bool gone)
{
	struct mmu_extras *x = ctx;
	struct { /* bpf/mmu_events.bpf.c's slot_key */
		__u32 tgid, slot;
		__u64 kvm, kvm_born;
	} k, next;
	int more;

	if (x->lock && gone)
		retire_process(x->lock->maps.lock_stats, key->tgid, (void **)&x->retired_lock,
			       &x->n_retired_lock, &x->cap_retired_lock,
			       sizeof(struct retired_lock), offsetof(struct retired_lock, stats));
	else if (x->lock)
		retire_entry(x->lock->maps.lock_stats, key, (void **)&x->retired_lock,
			     &x->n_retired_lock, &x->cap_retired_lock, sizeof(struct retired_lock),
			     offsetof(struct retired_lock, stats));
	if (!x->events)
		return;
	if (!gone) {
		retire_entry(x->events->maps.mmu_stats, key, (void **)&x->retired_mmu,
			     &x->n_retired_mmu, &x->cap_retired_mmu, sizeof(struct retired_mmu),
			     offsetof(struct retired_mmu, stats));
		bpf_map_delete_elem(bpf_map__fd(x->events->maps.calls), &key->tid);
		return;
	}
	retire_process(x->events->maps.mmu_stats, key->tgid, (void **)&x->retired_mmu,
		       &x->n_retired_mmu, &x->cap_retired_mmu, sizeof(struct retired_mmu),
		       offsetof(struct retired_mmu, stats));
	/* the VM is gone: so are its memslots */
	for (more = !bpf_map_get_next_key(bpf_map__fd(x->events->maps.slot_flags), NULL, &k); more;
	     k = next) {
		more = !bpf_map_get_next_key(bpf_map__fd(x->events->maps.slot_flags), &k, &next);
		if (k.tgid == key->tgid)
			bpf_map_delete_elem(bpf_map__fd(x->events->maps.slot_flags), &k);
	}
}

/*
 * Whether the program libbpf just failed to load is EVENT's tp_btf twin: then
 * that one program is loaded as raw_tp instead, rather than the whole object
 * failing (said with -v only: recovered, it is no error).
 */
static bool tp_btf_failed(const char *event)
{
	const char *prog = log_libbpf_failed_prog();
	size_t n = strlen(event);

	if (strncmp(prog, event, n) || strcmp(prog + n, "_btf"))
		return false;
	vlog("note: %s: the tp_btf program does not load here; using raw_tp", event);
	return true;
}

/* The rest of the figures go on: the report says why these are missing, libbpf with -v. */
static void load_failed(struct probe_status *p, int err)
{
	snprintf(p->why, sizeof(p->why), "load failed: %s (-v shows libbpf's log)", strerror(-err));
}

static int open_lock(struct mmu_extras *x, struct collector *c)
{
	static const char *const tp_progs[] = {"contention_begin_btf", "contention_begin_raw",
					       "contention_end_btf", "contention_end_raw"};
	static const char *const kp_progs[] = {
		"queued_read_lock_slowpath_kprobe", "queued_read_lock_slowpath_kretprobe",
		"queued_write_lock_slowpath_kprobe", "queued_write_lock_slowpath_kretprobe"};
	struct probe_status *p = new_probe(x, "lock", "contention_begin/end");
	bool tp = tracefs_has_event("lock", "contention_begin");
	bool btf = kernel_btf_has_tp_btf(&c->kb, "contention_begin");
	bool kp = !tp && ksym_lookup(NULL, "queued_write_lock_slowpath") == KSYM_PRESENT &&
		  !access("/sys/bus/event_source/devices/kprobe/type", F_OK);
	int err;

	if (!tp && !kp) {
		snprintf(p->why, sizeof(p->why),
			 "no lock:contention_* tracepoints (5.19+) and no kprobe on "
			 "queued_*_lock_slowpath");
		return -ENOENT;
	}
again:
	x->lock = mmu_lock_bpf__open();
	if (!x->lock)
		return -errno;
	x->lock->rodata->filter_pids = c->opts.filter_pids;
	x->lock->rodata->func_mode = c->func_mode;
	bpf_program__set_autoload(x->lock->progs.contention_begin_btf, tp && btf);
	bpf_program__set_autoload(x->lock->progs.contention_end_btf, tp && btf);
	bpf_program__set_autoload(x->lock->progs.contention_begin_raw, tp && !btf);
	bpf_program__set_autoload(x->lock->progs.contention_end_raw, tp && !btf);
	for (size_t i = 0; i < 4; i++)
		bpf_program__set_autoload(
			bpf_object__find_program_by_name(x->lock->obj, kp_progs[i]), kp);
	err = bpf_map__reuse_fd(x->lock->maps.traced_pids, bpf_map__fd(c->skel->maps.traced_pids));
	if (!err) /* the faults object's per-thread state says whether a wait is inside a fault */
		err = bpf_map__reuse_fd(x->lock->maps.thread_stats,
					bpf_map__fd(c->skel->maps.thread_stats));
	if (!err)
		err = share_maps(c, x->lock->maps.thread_news, x->lock->maps.seen_procs,
				 x->lock->maps.mmu_locks, x->lock->maps.vm_births);
	collector_size_thread_map(c, x->lock->maps.lock_stats);
	log_libbpf_forget();
	if (!err)
		err = mmu_lock_bpf__load(x->lock);
	if (err && btf && (tp_btf_failed("contention_begin") || tp_btf_failed("contention_end"))) {
		mmu_lock_bpf__destroy(x->lock);
		x->lock = NULL;
		btf = false;
		goto again;
	}
	if (!err)
		err = collector_add_object(c, retire, x, &x->lock->bss->health);
	if (err) {
		load_failed(p, err);
		return err;
	}
	p->kind = kp ? ATTACH_KPROBE : btf ? ATTACH_TP_BTF : ATTACH_RAW_TP;
	if (kp)
		p->name = "queued_{read,write}_lock_slowpath";
	attach_chosen(x, x->lock->obj, p, kp ? kp_progs : tp_progs, 4);
	return p->kind == ATTACH_NONE ? -ENOENT : 0;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct mmu_extras *x = ctx;
	const struct kvmmmu_event *e = data;

	if (len < sizeof(*e))
		return 0;
	return timeline_append(&x->timeline, e,
			       collector_vm_index(x->c, (int)e->tgid, e->kvm, e->kvm_born),
			       (double)e->ts_ns / 1e9 + x->mono_to_wall);
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* FUNC's probe: fentry, kprobe or none, its programs PROGS (named *probe for kprobes) loaded to
 * match. */
static struct probe_status *choose_function(struct mmu_extras *x, struct collector *c,
					    const char *func, const char *const *progs, size_t n)
{
	struct probe_status *p = new_probe(x, NULL, func);

	p->kind = collector_choose_function(c, func, p->why, sizeof(p->why));
	for (size_t i = 0; i < n; i++)
		bpf_program__set_autoload(
			bpf_object__find_program_by_name(x->events->obj, progs[i]),
			p->kind == (strstr(progs[i], "probe") ? ATTACH_KPROBE : ATTACH_FENTRY));
	return p;
}

static int open_events(struct mmu_extras *x, struct collector *c)
{
	static const char *const ioctl_progs[] = {"sys_enter_ioctl", "sys_exit_ioctl"};
	static const char *const load_progs[] = {"kvm_mmu_load_fentry", "kvm_mmu_load_fexit",
						 "kvm_mmu_load_kprobe", "kvm_mmu_load_kretprobe"};
	static const char *const unload_progs[] = {"kvm_mmu_free_roots_fentry",
						   "kvm_mmu_free_roots_kprobe"};
	struct probe_status *tps[sizeof(lifecycle_tps) / sizeof(lifecycle_tps[0])], *ioctls, *loads,
		*unloads;
	bool raw[sizeof(lifecycle_tps) / sizeof(lifecycle_tps[0])] = {};
	size_t first_probe = x->n_probes;
	int err;

again:
	x->n_probes = first_probe;
	x->events = mmu_events_bpf__open();
	if (!x->events)
		return -errno;
	x->events->rodata->filter_pids = c->opts.filter_pids;
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		tps[i] = new_probe(x, lifecycle_tps[i].group, lifecycle_tps[i].event);
		choose_tp(x->events->obj, c, tps[i], raw[i]);
	}
	ioctls = new_probe(x, "syscalls", "sys_{enter,exit}_ioctl");
	ioctls->kind = ATTACH_RAW_TP; /* a classic tracepoint; the closest kind we name */
	if (!tracefs_has_event("syscalls", "sys_enter_ioctl")) {
		ioctls->kind = ATTACH_NONE;
		snprintf(ioctls->why, sizeof(ioctls->why),
			 "no syscalls tracepoints (CONFIG_FTRACE_SYSCALLS): no dirty-log timeline");
		bpf_program__set_autoload(x->events->progs.sys_enter_ioctl, false);
		bpf_program__set_autoload(x->events->progs.sys_exit_ioctl, false);
	}
	loads = choose_function(x, c, "kvm_mmu_load", load_progs, ARRAY_LEN(load_progs));
	unloads =
		choose_function(x, c, "kvm_mmu_free_roots", unload_progs, ARRAY_LEN(unload_progs));
	err = bpf_map__reuse_fd(x->events->maps.traced_pids,
				bpf_map__fd(c->skel->maps.traced_pids));
	if (!err)
		err = bpf_map__reuse_fd(x->events->maps.thread_stats,
					bpf_map__fd(c->skel->maps.thread_stats));
	if (!err)
		err = share_maps(c, x->events->maps.thread_news, x->events->maps.seen_procs,
				 x->events->maps.mmu_locks, x->events->maps.vm_births);
	collector_size_thread_map(c, x->events->maps.mmu_stats);
	bpf_map__set_max_entries(x->events->maps.calls, c->max_threads);
	log_libbpf_forget();
	if (!err)
		err = mmu_events_bpf__load(x->events);
	for (size_t i = 0; err && i < sizeof(tps) / sizeof(tps[0]); i++) {
		if (raw[i] || tps[i]->kind != ATTACH_TP_BTF || !tp_btf_failed(tps[i]->name))
			continue;
		raw[i] = true; /* that one program as raw_tp, the object again */
		mmu_events_bpf__destroy(x->events);
		x->events = NULL;
		goto again;
	}
	if (!err)
		err = collector_add_object(c, retire, x, &x->events->bss->health);
	if (err) {
		for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
			tps[i]->kind = ATTACH_NONE;
			load_failed(tps[i], err);
		}
		ioctls->kind = loads->kind = unloads->kind = ATTACH_NONE;
		load_failed(ioctls, err);
		load_failed(loads, err);
		load_failed(unloads, err);
		return err;
	}
	if (loads->kind != ATTACH_NONE)
		attach_chosen(x, x->events->obj, loads, load_progs, ARRAY_LEN(load_progs));
	if (unloads->kind != ATTACH_NONE)
		attach_chosen(x, x->events->obj, unloads, unload_progs, ARRAY_LEN(unload_progs));
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++)
		attach_tp(x, x->events->obj, tps[i]);
	if (ioctls->kind != ATTACH_NONE)
		attach_chosen(x, x->events->obj, ioctls, ioctl_progs, 2);
	/* one ring-buffer set, one poll: the collector's wakes up for the timeline too */
	x->rb = c->rb;
	return ring_buffer__add(c->rb, bpf_map__fd(x->events->maps.events), on_event, x);
}

int mmu_extras_open(struct mmu_extras *x, struct collector *c, bool lock, bool events)
{
	struct timespec mono;

	memset(x, 0, sizeof(*x));
	x->c = c;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	x->mono_to_wall = sysinfo_now() - (mono.tv_sec + mono.tv_nsec / 1e9);
	x->lock_ok = lock && !open_lock(x, c);
	x->events_ok = events && !open_events(x, c);
	return 0;
}

void mmu_extras_poll(struct mmu_extras *x)
{
	if (x->rb)
		ring_buffer__consume(x->rb);
}

static void add_lock(struct collector *c, struct model *m, const struct kvmmmu_thread_key *k,
		     const struct kvmmmu_lock_stats *s)
{
	static struct figures f; /* large: off the stack */

	if (!s->id.ready)
		return;
	memset(&f, 0, sizeof(f));
	memcpy(f.lock_other_waits, s->other_waits, sizeof(f.lock_other_waits));
	memcpy(f.lock_other_wait_ns, s->other_wait_ns, sizeof(f.lock_other_wait_ns));
	collector_add_figures(c, m, k, &s->id, &f);
}

static int read_lock(struct mmu_extras *x, struct collector *c, struct model *m)
{
	int fd = bpf_map__fd(x->lock->maps.lock_stats);
	struct kvmmmu_lock_stats *s = malloc(sizeof(*s));
	struct kvmmmu_thread_key k, next;
	int more;

	if (!s)
		return -ENOMEM;
	for (more = !bpf_map_get_next_key(fd, NULL, &k); more; k = next) {
		more = !bpf_map_get_next_key(fd, &k, &next);
		if (!bpf_map_lookup_elem(fd, &k, s))
			add_lock(c, m, &k, s);
	}
	for (size_t i = 0; i < x->n_retired_lock; i++)
		add_lock(c, m, &x->retired_lock[i].key, &x->retired_lock[i].stats);
	free(s);
	return 0;
}

static void add_mmu(struct collector *c, struct model *m, const struct kvmmmu_thread_key *k,
		    const struct kvmmmu_mmu_stats *s)
{
	static struct figures f;

	if (!s->id.ready)
		return;
	memset(&f, 0, sizeof(f));
	memcpy(f.mmu, s->counters, sizeof(f.mmu));
	f.mmu_ns[DIRTY_LOG_ENABLE_NS] = s->enable_ns;
	f.mmu_ns[DIRTY_LOG_DISABLE_NS] = s->disable_ns;
	f.mmu_ns[DIRTY_LOG_GET_NS] = s->get_ns;
	f.mmu_ns[DIRTY_LOG_CLEAR_NS] = s->clear_ns;
	f.mmu_ns[ROOT_LOAD_NS] = s->root_load_ns;
	collector_add_figures(c, m, k, &s->id, &f);
}

static int read_events(struct mmu_extras *x, struct collector *c, struct model *m)
{
	int fd = bpf_map__fd(x->events->maps.mmu_stats);
	struct kvmmmu_thread_key k, next;
	struct kvmmmu_mmu_stats s;
	int more;

	for (more = !bpf_map_get_next_key(fd, NULL, &k); more; k = next) {
		more = !bpf_map_get_next_key(fd, &k, &next);
		if (!bpf_map_lookup_elem(fd, &k, &s))
			add_mmu(c, m, &k, &s);
	}
	for (size_t i = 0; i < x->n_retired_mmu; i++)
		add_mmu(c, m, &x->retired_mmu[i].key, &x->retired_mmu[i].stats);
	return 0;
}

int mmu_extras_read(struct mmu_extras *x, struct collector *c, struct model *m)
{
	int err = 0;

	mmu_extras_poll(x);
	if (x->lock_ok)
		err = read_lock(x, c, m);
	if (!err && x->events_ok)
		err = read_events(x, c, m);
	/*
	 * A VM whose only events are its timeline's (memslots set up before
	 * its vCPUs run, or by a thread counted with another VM) has a row too.
	 */
	for (size_t i = 0; !err && i < x->timeline.n; i++) {
		int tgid = (int)x->timeline.events[i].ev.tgid;

		if (!collector_model_vm(c, m, tgid, x->timeline.events[i].vm_index,
					collector_process_name(c, tgid)))
			err = -ENOMEM;
	}
	model_sort(m); /* the faults object's rows and ours */
	return err;
}

size_t mmu_extras_forget(struct mmu_extras *x, int pid, size_t before)
{
	size_t kept = 0;

	for (size_t i = 0; i < x->n_retired_lock; i++)
		if ((int)x->retired_lock[i].key.tgid != pid)
			x->retired_lock[kept++] = x->retired_lock[i];
	x->n_retired_lock = kept;
	kept = 0;
	for (size_t i = 0; i < x->n_retired_mmu; i++)
		if ((int)x->retired_mmu[i].key.tgid != pid)
			x->retired_mmu[kept++] = x->retired_mmu[i];
	x->n_retired_mmu = kept;
	return timeline_forget(&x->timeline, pid, before);
}

void mmu_extras_close(struct mmu_extras *x)
{
	while (x->n_links)
		bpf_link__destroy(x->links[--x->n_links]);
	free(x->retired_lock);
	free(x->retired_mmu);
	mmu_lock_bpf__destroy(x->lock);
	mmu_events_bpf__destroy(x->events);
	timeline_free(&x->timeline);
	memset(x, 0, sizeof(*x));
}
