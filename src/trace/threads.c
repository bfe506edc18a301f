// SPDX-License-Identifier: GPL-2.0
/*
 * The thread registry (threads.h): what the thread-news ring says (a
 * thread's first event, its exit), the names of threads and processes, the
 * /proc vCPU map kept fresh for live VMs, and when a process is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <bpf/libbpf.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "threads.h"
#include "array.h"
#include "log.h"
#include "procs.h"
#include "vm_name.h"

struct name_key {
	int tgid, tid;
	size_t idx; /* into t->names */
};

static int name_key_cmp(const void *a, const void *b)
{
	const struct name_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static struct thread_name *find_name(const struct threads *t, int tgid, int tid)
{
	struct name_key k = {tgid, tid, 0};
	struct name_key **found = tfind(&k, &t->name_index, name_key_cmp);

	return found ? &t->names[(*found)->idx] : NULL;
}

/* Records the name of (TGID, TID), tid 0 for the process; returns it, or NULL if known. */
static struct thread_name *remember_name(struct threads *t, int tgid, int tid, const char *comm)
{
	struct name_key *k, **slot;
	struct thread_name *n;

	if (find_name(t, tgid, tid))
		return NULL;
	n = array_grow(t->names, t->n_names + 1, &t->cap_names, sizeof(*n));
	k = malloc(sizeof(*k));
	if (n)
		t->names = n;
	if (!n || !k) {
		free(k);
		return NULL;
	}
	*k = (struct name_key){tgid, tid, t->n_names};
	slot = tsearch(k, &t->name_index, name_key_cmp);
	if (!slot || *slot != k) {
		free(k);
		return NULL;
	}
	n = &t->names[t->n_names++];
	memset(n, 0, sizeof(*n));
	n->tgid = tgid;
	n->tid = tid;
	snprintf(n->comm, sizeof(n->comm), "%.15s", comm);
	return n;
}

static void note_new_process(struct threads *t, int tgid)
{
	int *p = array_grow(t->new_procs, t->n_new_procs + 1, &t->cap_new_procs, sizeof(*p));

	if (!p)
		return;
	t->new_procs = p;
	t->new_procs[t->n_new_procs++] = tgid;
}

/* Process TGID (COMM) seen for the first time, while it runs: its entry, named. */
static struct thread_name *new_process(struct threads *t, int tgid, const char *comm)
{
	struct thread_name *proc = remember_name(t, tgid, 0, comm);
	struct vm_name vn;

	if (!proc)
		return NULL;
	/* once, while it lives: its command line says what users call it */
	if (!vm_name_read("/proc", tgid, comm, &vn)) {
		proc->vm_name = vn.namespace ? NULL : vn.name;
		if (vn.namespace && asprintf(&proc->vm_name, "%s/%s", vn.namespace, vn.name) < 0)
			proc->vm_name = NULL;
		if (proc->vm_name && vn.namespace)
			proc->ns_len = strlen(vn.namespace);
		if (proc->vm_name != vn.name)
			free(vn.name);
		free(vn.namespace);
	}
	note_new_process(t, tgid);
	return proc;
}

/*
 * A thread seen for the first time, while it runs: name it and, when FAULTS
 * (the faults object saw it: it may be a vCPU), find its vCPU in /proc now.
 */
void threads_note(struct threads *t, int tgid, int tid, const struct kvmmmu_thread_id *id,
		  bool faults)
{
	struct thread_name *proc = find_name(t, tgid, 0);
	bool vcpu_unknown = faults && (id->vcpu_id < 0 || t->attribution == ATTRIBUTE_PROC);
	struct thread_name *th;

	if (!proc && !(proc = new_process(t, tgid, id->process)))
		return;
	threads_vm_index(t, tgid, id->kvm, id->kvm_born); /* VMs are numbered in the order seen */
	th = remember_name(t, tgid, tid, id->comm);
	if (!th)
		return;
	th->vcpu_unknown = vcpu_unknown;
	proc = find_name(t, tgid, 0); /* remember_name may have moved names[] */
	if (vcpu_unknown) {
		proc->needs_proc = true;
		vcpu_map_scan(&t->vcpus, "/proc", tgid);
	}
}

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
 * TGID has exited: every source retires what it still has of it (a thread
 * whose exit news was lost, or that a racing exit took for the last:
 * without this they would stay, and bring the process back as a VM that
 * never goes), and /proc has no more to say.
 */
static void process_gone(struct threads *t, __u32 tgid)
{
	struct kvmmmu_thread_key gone = {.tgid = tgid};
	struct thread_name *proc;

	/*
	 * each thread whose exit was not handled first (a source may keep
	 * per-thread state beyond its figures), then all
	 */
	for (size_t i = 0; i < t->n_names; i++) {
		struct kvmmmu_thread_key key = {.tgid = tgid, .tid = (__u32)t->names[i].tid};

		if (t->names[i].tgid != (int)tgid || !key.tid || t->names[i].exited)
			continue;
		for (size_t h = 0; h < t->n_hooks; h++)
			t->hooks[h].fn(t->hooks[h].ctx, &key, false);
	}
	for (size_t i = 0; i < t->n_hooks; i++)
		t->hooks[i].fn(t->hooks[i].ctx, &gone, true);
	proc = find_name(t, (int)tgid, 0);
	if (proc)
		proc->gone = true;
}

void threads_exited(struct threads *t, const struct kvmmmu_thread_key *key, bool group_dead)
{
	struct thread_name *proc, *th;

	for (size_t i = 0; i < t->n_hooks; i++)
		t->hooks[i].fn(t->hooks[i].ctx, key, false);
	/* after the hooks: the faults source may have named it just now */
	th = find_name(t, (int)key->tgid, (int)key->tid);
	if (th)
		th->exited = true;
	if (!group_dead)
		return;
	/*
	 * signal->live reached 0, but every thread that exits after that reads
	 * 0 too: the process is gone once /proc says so (now, or at a tick).
	 */
	proc = find_name(t, (int)key->tgid, 0);
	if (proc && !proc->gone)
		proc->dying = true;
	if (process_exited((int)key->tgid))
		process_gone(t, key->tgid);
}

static int on_thread_news(void *ctx, void *data, size_t len)
{
	const struct kvmmmu_thread_news *ev = data;

	if (len < sizeof(*ev))
		return 0;
	if (ev->kind == KVMMMU_THREAD_NEW || ev->kind == KVMMMU_THREAD_NEW_PROCESS)
		threads_note(ctx, (int)ev->key.tgid, (int)ev->key.tid, &ev->id,
			     ev->kind == KVMMMU_THREAD_NEW);
	else if (ev->kind == KVMMMU_THREAD_EXIT)
		threads_exited(ctx, &ev->key, ev->group_dead);
	return 0;
}

int threads_open(struct threads *t, enum attribution attribution, int news_fd)
{
	memset(t, 0, sizeof(*t));
	t->attribution = attribution;
	t->rb = ring_buffer__new(news_fd, on_thread_news, t, NULL);
	if (!t->rb) {
		int err = -errno;

		elog("cannot open the thread-news ring buffer: %s", strerror(-err));
		return err;
	}
	return 0;
}

int threads_add_ring(struct threads *t, int map_fd, int (*fn)(void *, void *, size_t), void *ctx)
{
	return ring_buffer__add(t->rb, map_fd, fn, ctx);
}

int threads_add_hook(struct threads *t, threads_retire_fn fn, void *ctx)
{
	if (t->n_hooks == THREADS_MAX_HOOKS)
		return -E2BIG;
	t->hooks[t->n_hooks].fn = fn;
	t->hooks[t->n_hooks++].ctx = ctx;
	return 0;
}

bool threads_known(const struct threads *t, int tgid, int tid)
{
	return find_name(t, tgid, tid) != NULL;
}

void threads_consume(struct threads *t)
{
	ring_buffer__consume(t->rb);
}

int threads_poll_fd(const struct threads *t)
{
	return ring_buffer__epoll_fd(t->rb);
}

int threads_poll(struct threads *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms);

	return n == -EINTR ? 0 : n;
}

void threads_tick(struct threads *t)
{
	for (size_t i = 0; i < t->n_names; i++) {
		struct thread_name *n = &t->names[i];

		if (n->tid || n->gone)
			continue;
		/*
		 * Its last thread's exit was lost, or came before its first
		 * news: without this it would be held for ever.
		 */
		if ((kill((pid_t)n->tgid, 0) && errno == ESRCH) ||
		    (n->dying && process_exited(n->tgid)))
			process_gone(t, n->tgid);
		/* A busy vCPU is seldom blocked in KVM_RUN: look again while the VM lives. */
		else if (n->needs_proc)
			vcpu_map_scan(&t->vcpus, "/proc", n->tgid);
	}
}

void threads_forget_process(struct threads *t, int pid)
{
	size_t kept = 0;

	/* its names go: the index is rebuilt over what stays */
	tdestroy(t->name_index, free);
	t->name_index = NULL;
	for (size_t i = 0; i < t->n_names; i++) {
		if (t->names[i].tgid == pid) {
			free(t->names[i].vm_name);
			free(t->names[i].vms);
			continue;
		}
		t->names[kept++] = t->names[i];
	}
	t->n_names = kept;
	for (size_t i = 0; i < t->n_names; i++) {
		struct name_key *k = malloc(sizeof(*k));

		if (!k)
			break;
		*k = (struct name_key){t->names[i].tgid, t->names[i].tid, i};
		if (!tsearch(k, &t->name_index, name_key_cmp))
			free(k);
	}
	vcpu_map_forget(&t->vcpus, pid);
}

int threads_vm_index(struct threads *t, int pid, __u64 kvm, __u64 born)
{
	struct thread_name *n = find_name(t, pid, 0);
	struct vm_key *vms;
	char comm[16];

	/*
	 * A VM's own event before any of its process's threads was news (a
	 * VMM that makes two VMs, and their memslots, before any vCPU runs):
	 * the process is known from now, so that its VMs are numbered in the
	 * order seen here, not the second VM's events given the first's index.
	 */
	if (!n && kvm) {
		proc_comm("/proc", pid, 0, comm, sizeof(comm));
		if (comm[0]) /* it still runs */
			n = new_process(t, pid, comm);
	}
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

size_t threads_process_vms(const struct threads *t, int pid)
{
	const struct thread_name *n = find_name(t, pid, 0);

	return n ? n->n_vms : 0;
}

bool threads_process_gone(const struct threads *t, int pid)
{
	const struct thread_name *n = find_name(t, pid, 0);

	return n && n->gone;
}

void threads_vm_namespace(const struct threads *t, int pid, char *buf, size_t size)
{
	const struct thread_name *n = find_name(t, pid, 0);
	size_t len = n && n->vm_name ? n->ns_len : 0;

	snprintf(buf, size, "%.*s", (int)len, len ? n->vm_name : "");
}

const char *threads_vm_name(const struct threads *t, int pid)
{
	const struct thread_name *n = find_name(t, pid, 0);

	return n ? (n->vm_name ? n->vm_name : n->comm) : NULL;
}

const char *threads_process_name(const struct threads *t, int pid)
{
	const struct thread_name *n = find_name(t, pid, 0);

	return n ? n->comm : NULL;
}

size_t threads_take_new(struct threads *t, const int **pids)
{
	size_t n = t->n_new_procs;

	*pids = t->new_procs;
	t->n_new_procs = 0;
	return n;
}

struct vm_row *threads_model_vm(struct threads *t, struct model *m, int tgid, int index,
				const char *process)
{
	struct vm_row *vm = model_vm(m, tgid, index);

	if (!vm)
		return NULL;
	if (!vm->comm[0])
		snprintf(vm->comm, sizeof(vm->comm), "%.15s", process ? process : "");
	if (!vm->name) {
		vm->name = threads_vm_name(t, tgid);
		threads_vm_namespace(t, tgid, vm->namespace, sizeof(vm->namespace));
	}
	vm->gone = threads_process_gone(t, tgid);
	return vm;
}

void threads_add_figures(struct threads *t, struct model *m, const struct kvmmmu_thread_key *key,
			 const struct kvmmmu_thread_id *id, const struct figures *f)
{
	int tgid = (int)key->tgid, tid = (int)key->tid, vcpu;
	struct vm_row *vm = threads_model_vm(
		t, m, tgid, threads_vm_index(t, tgid, id->kvm, id->kvm_born), id->process);
	struct vcpu_row *row;

	if (!vm)
		return;
	if (t->attribution == ATTRIBUTE_AUTO && id->vcpu_id >= 0)
		vcpu = id->vcpu_id;
	else
		vcpu = vcpu_map_lookup(&t->vcpus, tgid, tid);
	/* /proc was not read in time (the VM was too short): the name BPF captured */
	if (vcpu < 0)
		vcpu = vcpu_from_thread_name(id->comm);
	row = model_row(vm, vcpu, tid);
	if (!row)
		return;
	if (!row->comm[0])
		snprintf(row->comm, sizeof(row->comm), "%.15s", id->comm);
	figures_add(&row->f, f);
	figures_add(&vm->total, f);
}

void threads_close(struct threads *t)
{
	ring_buffer__free(t->rb);
	tdestroy(t->name_index, free);
	free(t->new_procs);
	for (size_t i = 0; i < t->n_names; i++) {
		free(t->names[i].vm_name);
		free(t->names[i].vms);
	}
	free(t->names);
	vcpu_map_free(&t->vcpus);
	memset(t, 0, sizeof(*t));
}
