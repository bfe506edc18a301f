// SPDX-License-Identifier: GPL-2.0
/*
 * The collector's thread bookkeeping: what the thread-news ring says (a
 * thread's first event, its exit), the names of threads and processes, the
 * /proc vCPU map kept fresh for live VMs, and exited threads' last figures.
 */
#include <dirent.h>
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"
#include "array.h"
#include "faults.skel.h"
#include "log.h"
#include "mmu_extras.h"
#include "threads.h"
#include "vm_name.h"

struct name_key {
	int tgid, tid;
	size_t idx; /* into c->names */
};

static int name_key_cmp(const void *a, const void *b)
{
	const struct name_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static struct thread_name *find_name(const struct collector *c, int tgid, int tid)
{
	struct name_key k = {tgid, tid, 0};
	struct name_key **found = tfind(&k, &c->name_index, name_key_cmp);

	return found ? &c->names[(*found)->idx] : NULL;
}

/* Records the name of (TGID, TID), tid 0 for the process; returns it, or NULL if known. */
static struct thread_name *remember_name(struct collector *c, int tgid, int tid, const char *comm)
{
	struct name_key *k, **slot;
	struct thread_name *n;

	if (find_name(c, tgid, tid))
		return NULL;
	n = array_grow(c->names, c->n_names + 1, &c->cap_names, sizeof(*n));
	k = malloc(sizeof(*k));
	if (n)
		c->names = n;
	if (!n || !k) {
		free(k);
		return NULL;
	}
	*k = (struct name_key){tgid, tid, c->n_names};
	slot = tsearch(k, &c->name_index, name_key_cmp);
	if (!slot || *slot != k) {
		free(k);
		return NULL;
	}
	n = &c->names[c->n_names++];
	memset(n, 0, sizeof(*n));
	n->tgid = tgid;
	n->tid = tid;
	snprintf(n->comm, sizeof(n->comm), "%.15s", comm);
	return n;
}

static void note_new_process(struct collector *c, int tgid)
{
	int *p = array_grow(c->new_procs, c->n_new_procs + 1, &c->cap_new_procs, sizeof(*p));

	if (!p)
		return;
	c->new_procs = p;
	c->new_procs[c->n_new_procs++] = tgid;
}

/*
 * A thread seen for the first time, while it runs: name it and, when FAULTS
 * (the faults object saw it: it may be a vCPU), find its vCPU in /proc now.
 */
static void note_thread(struct collector *c, int tgid, int tid, const struct kvmmmu_thread_id *id,
			bool faults)
{
	struct thread_name *proc = find_name(c, tgid, 0);
	bool vcpu_unknown = faults && (id->vcpu_id < 0 || c->opts.attribution == ATTRIBUTE_PROC);
	struct thread_name *t;

	if (!proc) {
		struct vm_name vn;

		proc = remember_name(c, tgid, 0, id->process);
		if (!proc)
			return;
		/* once, while it lives: its command line says what users call it */
		if (!vm_name_read("/proc", tgid, id->process, &vn)) {
			proc->vm_name = vn.namespace ? NULL : vn.name;
			if (vn.namespace &&
			    asprintf(&proc->vm_name, "%s/%s", vn.namespace, vn.name) < 0)
				proc->vm_name = NULL;
			if (proc->vm_name && vn.namespace)
				proc->ns_len = strlen(vn.namespace);
			if (proc->vm_name != vn.name)
				free(vn.name);
			free(vn.namespace);
		}
		note_new_process(c, tgid);
	}
	collector_vm_index(c, tgid, id->kvm, id->kvm_born); /* VMs are numbered in the order seen */
	t = remember_name(c, tgid, tid, id->comm);
	if (!t)
		return;
	t->vcpu_unknown = vcpu_unknown;
	proc = find_name(c, tgid, 0); /* remember_name may have moved names[] */
	if (vcpu_unknown) {
		proc->needs_proc = true;
		vcpu_map_scan(&c->vcpus, "/proc", tgid);
	}
}

/* The process's VMs are gone: their mmu_lock slots are free for others. */
static void forget_mmu_locks(struct collector *c, __u32 tgid)
{
	for (size_t i = 0; c->lock_table && i < KVMMMU_LOCK_SLOTS; i++) {
		struct kvmmmu_lock_slot *slot = &c->lock_table->slots[i];

		if (slot->lock && slot->tgid == tgid)
			__atomic_store_n(&slot->lock, 0, __ATOMIC_RELAXED);
	}
}

/* The process's VMs are gone: their births go too (the map is LRU, but need not be pushed). */
static void forget_births(struct collector *c, __u32 tgid)
{
	int fd = bpf_map__fd(c->skel->maps.vm_births), more;
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

static void retire_thread(struct collector *c, const struct kvmmmu_thread_key *key,
			  bool group_dead);

/*
 * Whether every thread of TGID has exited: none in /proc that is not a
 * zombie. An exiting thread runs (KVM's teardown among its work) until
 * exit_notify(), after its sched_process_exit: until then it may still
 * make events, and its own exit news is still to come.
 */
static bool process_exited(int tgid)
{
	char path[64], buf[512], *state;
	bool alive = false;
	struct dirent *e;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", tgid);
	d = opendir(path);
	if (!d)
		return true;
	while (!alive && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat", tgid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue; /* reaped since the listing */
		/* "TID (COMM) S ...": COMM may hold anything, the state follows its last ')' */
		if (fgets(buf, sizeof(buf), f) && (state = strrchr(buf, ')')) && state[1] == ' ')
			alive = state[2] != 'Z' && state[2] != 'X';
		fclose(f);
	}
	closedir(d);
	return !alive;
}

/*
 * TGID has exited: every entry it still has in the per-thread maps is
 * retired (a thread whose exit news was lost, or that a racing exit took
 * for the last: without this they would stay, and bring the process back
 * as a VM that never goes), its VMs' locks and its news slot are free, and
 * /proc has no more to say.
 */
static void process_gone(struct collector *c, __u32 tgid)
{
	struct kvmmmu_thread_key key, next, gone = {.tgid = tgid};
	int fd = bpf_map__fd(c->skel->maps.thread_stats), more;
	struct thread_name *proc;

	for (more = !bpf_map_get_next_key(fd, NULL, &key); more; key = next) {
		more = !bpf_map_get_next_key(fd, &key, &next);
		if (key.tgid == tgid)
			retire_thread(c, &key, false);
	}
	for (size_t i = 0; i < c->n_hooks; i++)
		c->hooks[i].fn(c->hooks[i].ctx, &gone, true);
	forget_mmu_locks(c, tgid);
	forget_births(c, tgid);
	bpf_map_delete_elem(bpf_map__fd(c->skel->maps.seen_procs), &tgid);
	proc = find_name(c, (int)tgid, 0);
	if (proc)
		proc->gone = true;
}

/*
 * KEY exited: keep its last figures in user space and free its entries in
 * every per-thread map, so that a long run with VMs coming and going never
 * fills them. The thread's name stays, for the report.
 */
static void retire_thread(struct collector *c, const struct kvmmmu_thread_key *key, bool group_dead)
{
	int fd = bpf_map__fd(c->skel->maps.thread_stats);
	struct retired_thread *r;
	struct thread_name *proc;

	r = array_grow(c->retired, c->n_retired + 1, &c->cap_retired, sizeof(*r));
	if (r) {
		c->retired = r;
		r = &c->retired[c->n_retired];
		if (!bpf_map_lookup_elem(fd, key, &r->stats) && r->stats.id.ready) {
			r->key = *key;
			c->n_retired++;
			/* its news may have been lost: name it now, or -p NAME never sees its VM */
			if (!find_name(c, (int)key->tgid, (int)key->tid))
				note_thread(c, (int)key->tgid, (int)key->tid, &r->stats.id, false);
		}
	}
	bpf_map_delete_elem(fd, key);
	for (size_t i = 0; i < c->n_hooks; i++)
		c->hooks[i].fn(c->hooks[i].ctx, key, false);
	if (!group_dead)
		return;
	/*
	 * signal->live reached 0, but every thread that exits after that reads
	 * 0 too: the process is gone once /proc says so (now, or at a tick).
	 */
	proc = find_name(c, (int)key->tgid, 0);
	if (proc && !proc->gone)
		proc->dying = true;
	if (process_exited((int)key->tgid))
		process_gone(c, key->tgid);
}

static int on_thread_news(void *ctx, void *data, size_t len)
{
	const struct kvmmmu_thread_news *ev = data;

	if (len < sizeof(*ev))
		return 0;
	if (ev->kind == KVMMMU_THREAD_NEW || ev->kind == KVMMMU_THREAD_NEW_PROCESS)
		note_thread(ctx, (int)ev->key.tgid, (int)ev->key.tid, &ev->id,
			    ev->kind == KVMMMU_THREAD_NEW);
	else if (ev->kind == KVMMMU_THREAD_EXIT)
		retire_thread(ctx, &ev->key, ev->group_dead);
	return 0;
}

int collector_open_news(struct collector *c)
{
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.thread_news), on_thread_news, c, NULL);
	if (!c->rb) {
		int err = -errno;

		elog("cannot open the thread-news ring buffer: %s", strerror(-err));
		return err;
	}
	return 0;
}

int collector_poll_fd(const struct collector *c)
{
	return ring_buffer__epoll_fd(c->rb);
}

int collector_poll(struct collector *c, int timeout_ms)
{
	int n = ring_buffer__poll(c->rb, timeout_ms);

	return n == -EINTR ? 0 : n;
}

/*
 * The backstop when thread news was lost: names every thread in the faults
 * map, and retires those that have exited.
 */
static void scan_threads(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.thread_stats);
	struct kvmmmu_thread_key k, next, *dead = NULL;
	struct kvmmmu_thread_stats *s = malloc(sizeof(*s));
	size_t n_dead = 0;
	int more;

	if (!s)
		return;
	for (more = !bpf_map_get_next_key(fd, NULL, &k); more; k = next) {
		more = !bpf_map_get_next_key(fd, &k, &next);
		if (!find_name(c, (int)k.tgid, (int)k.tid) && !bpf_map_lookup_elem(fd, &k, s) &&
		    s->id.ready)
			note_thread(c, (int)k.tgid, (int)k.tid, &s->id, true);
		if (syscall(SYS_tgkill, k.tgid, k.tid, 0) && errno == ESRCH) {
			struct kvmmmu_thread_key *d = realloc(dead, (n_dead + 1) * sizeof(*d));

			if (d) {
				dead = d;
				dead[n_dead++] = k;
			}
		}
	}
	for (size_t i = 0; i < n_dead; i++) /* not while walking the keys */
		retire_thread(c, &dead[i], kill((pid_t)dead[i].tgid, 0) && errno == ESRCH);
	free(dead);
	free(s);
}

void collector_tick(struct collector *c)
{
	struct kvmmmu_health h;

	ring_buffer__consume(c->rb);
	collector_health_sum(c, &h);
	if (h.news_lost != c->news_lost) {
		c->news_lost = h.news_lost;
		scan_threads(c);
	}
	for (size_t i = 0; i < c->n_names; i++) {
		struct thread_name *n = &c->names[i];

		if (n->tid || n->gone)
			continue;
		/*
		 * Its last thread's exit was lost, or came before its first
		 * news: without this it would be held for ever.
		 */
		if ((kill((pid_t)n->tgid, 0) && errno == ESRCH) ||
		    (n->dying && process_exited(n->tgid)))
			process_gone(c, n->tgid);
		/* A busy vCPU is seldom blocked in KVM_RUN: look again while the VM lives. */
		else if (n->needs_proc)
			vcpu_map_scan(&c->vcpus, "/proc", n->tgid);
	}
}

void collector_forget_process(struct collector *c, int pid, size_t *timeline_seen)
{
	size_t kept = 0;

	*timeline_seen -= mmu_extras_forget(c->extras, pid, *timeline_seen);
	for (size_t i = 0; i < c->n_retired; i++)
		if ((int)c->retired[i].key.tgid != pid)
			c->retired[kept++] = c->retired[i];
	c->n_retired = kept;
	if (!kept) { /* 8 KiB a thread: a burst's worth is not kept for ever */
		free(c->retired);
		c->retired = NULL;
		c->cap_retired = 0;
	}
	/* its names go too: the index is rebuilt over what stays */
	tdestroy(c->name_index, free);
	c->name_index = NULL;
	kept = 0;
	for (size_t i = 0; i < c->n_names; i++) {
		if (c->names[i].tgid == pid) {
			free(c->names[i].vm_name);
			free(c->names[i].vms);
			continue;
		}
		c->names[kept++] = c->names[i];
	}
	c->n_names = kept;
	for (size_t i = 0; i < c->n_names; i++) {
		struct name_key *k = malloc(sizeof(*k));

		if (!k)
			break;
		*k = (struct name_key){c->names[i].tgid, c->names[i].tid, i};
		if (!tsearch(k, &c->name_index, name_key_cmp))
			free(k);
	}
	vcpu_map_forget(&c->vcpus, pid);
}

void collector_trim_timeline(struct collector *c, size_t *timeline_seen)
{
	*timeline_seen -= timeline_trim(&c->extras->timeline, *timeline_seen);
}

void collector_cap_timeline(struct collector *c, size_t *timeline_seen)
{
	timeline_cap(&c->extras->timeline, timeline_seen);
}

int collector_vm_index(struct collector *c, int pid, __u64 kvm, __u64 born)
{
	struct thread_name *n = find_name(c, pid, 0);
	struct vm_key *vms;

	if (!n || !kvm)
		return 1;
	for (size_t i = 0; i < n->n_vms; i++)
		if (n->vms[i].kvm == kvm && n->vms[i].born == born)
			return (int)i + 1;
	vms = realloc(n->vms, (n->n_vms + 1) * sizeof(*vms));
	if (!vms)
		return 1;
	n->vms = vms;
	n->vms[n->n_vms++] = (struct vm_key){kvm, born};
	return (int)n->n_vms;
}

size_t collector_process_vms(const struct collector *c, int pid)
{
	const struct thread_name *n = find_name(c, pid, 0);

	return n ? n->n_vms : 0;
}

bool collector_process_gone(const struct collector *c, int pid)
{
	const struct thread_name *n = find_name(c, pid, 0);

	return n && n->gone;
}

void collector_vm_namespace(const struct collector *c, int pid, char *buf, size_t size)
{
	const struct thread_name *n = find_name(c, pid, 0);
	size_t len = n && n->vm_name ? n->ns_len : 0;

	snprintf(buf, size, "%.*s", (int)len, len ? n->vm_name : "");
}

const char *collector_vm_name(const struct collector *c, int pid)
{
	const struct thread_name *n = find_name(c, pid, 0);

	return n ? (n->vm_name ? n->vm_name : n->comm) : NULL;
}

const char *collector_process_name(const struct collector *c, int pid)
{
	const struct thread_name *n = find_name(c, pid, 0);

	return n ? n->comm : NULL;
}

size_t collector_take_new(struct collector *c, const int **pids)
{
	size_t n = c->n_new_procs;

	*pids = c->new_procs;
	c->n_new_procs = 0;
	return n;
}

void collector_free_threads(struct collector *c)
{
	ring_buffer__free(c->rb);
	free(c->retired);
	tdestroy(c->name_index, free);
	free(c->new_procs);
	for (size_t i = 0; i < c->n_names; i++) {
		free(c->names[i].vm_name);
		free(c->names[i].vms);
	}
	free(c->names);
	vcpu_map_free(&c->vcpus);
}
