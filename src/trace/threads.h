/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The thread registry: every traced thread and process by name, as BPF
 * announced them (the thread-news ring) or a source found them; which VM
 * and vCPU each is; which processes have exited. Sources register a hook
 * to free their per-thread entries when a thread or process exits, and
 * place their figures in the model through it. It knows no source.
 */
#ifndef KVMMMU_THREADS_H
#define KVMMMU_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "kvmmmu.h"
#include "model.h"
#include "source.h"
#include "vcpu_map.h"

struct ring_buffer;

/* A VM: its struct kvm's address, and when it was made (0: before kvmmmu attached). */
struct vm_key {
	__u64 kvm, born;
};

/* A thread (or, with tid 0, a process) seen in the maps, named while it lived. */
struct thread_name {
	int tgid, tid;
	char comm[16];
	bool vcpu_unknown;  /* thread: BPF could not tell its vCPU */
	bool needs_proc;    /* process: some thread's vCPU must come from /proc */
	bool gone;	    /* process: exited (no more /proc scans) */
	bool dying;	    /* process: a thread's exit said it was the last: confirm in /proc */
	bool exited;	    /* thread: its exit was handled (its entries retired) */
	char *vm_name;	    /* process: the VM's name (vm_name.h), read at its first sighting */
	struct vm_key *vms; /* process: its VMs, in the order seen (index - 1) */
	size_t n_vms;
	size_t ns_len; /* process: vm_name is "NAMESPACE/NAME" (KubeVirt), NAMESPACE this long */
};

/*
 * A source's hook: thread KEY exited, free its entries (keeping its last
 * figures); GONE when its whole process has (KEY's tid is then 0): every
 * entry of KEY's tgid goes.
 */
typedef void (*threads_retire_fn)(void *ctx, const struct kvmmmu_thread_key *key, bool gone);
#define THREADS_MAX_HOOKS 4

struct threads {
	enum attribution attribution;
	struct thread_name *names; /* (tgid, tid) -> comm, tid 0 for the process */
	size_t n_names, cap_names;
	void *name_index; /* tsearch tree over names[], by (tgid, tid) */
	int *new_procs;	  /* processes first seen since threads_take_new() */
	size_t n_new_procs, cap_new_procs;
	struct vcpu_map vcpus;
	struct ring_buffer *rb; /* thread news, and the sources' own rings */
	struct {
		threads_retire_fn fn;
		void *ctx;
	} hooks[THREADS_MAX_HOOKS];
	size_t n_hooks;
};

/* Listens to the thread-news ring NEWS_FD; 0 or -errno (said). */
int threads_open(struct threads *t, enum attribution attribution, int news_fd);
/* Another ring to poll with the news (a source's events): FN(CTX, data, len) per record. */
int threads_add_ring(struct threads *t, int map_fd, int (*fn)(void *, void *, size_t), void *ctx);
/* A source's exit hook; hooks run in the order added. */
int threads_add_hook(struct threads *t, threads_retire_fn fn, void *ctx);
/*
 * A thread seen for the first time, while it runs: name it and, when
 * FAULTS (the faults object saw it: it may be a vCPU), find its vCPU in
 * /proc now.
 */
void threads_note(struct threads *t, int tgid, int tid, const struct kvmmmu_thread_id *id,
		  bool faults);
bool threads_known(const struct threads *t, int tgid, int tid);
/*
 * KEY exited: every source's hook frees its entries; GROUP_DEAD (it said it
 * was its process's last) and /proc agrees: the process is gone.
 */
void threads_exited(struct threads *t, const struct kvmmmu_thread_key *key, bool group_dead);
/* Handles what BPF announced since the last call. */
void threads_consume(struct threads *t);
int threads_poll(struct threads *t, int timeout_ms);
int threads_poll_fd(const struct threads *t);
/* Processes whose exit was missed are found gone; live VMs' vCPU maps are refreshed. */
void threads_tick(struct threads *t);
/* PID's names and vCPU map go (it exited and its last figures were reported). */
void threads_forget_process(struct threads *t, int pid);
/*
 * Which of process PID's VMs the struct kvm at KVM, made at BORN, is: 1 for
 * the first seen, 2 for the next, ... (bpf's struct kvmmmu_thread_id). KVM 0
 * (a thread that is no vCPU and changed no VM) is the first.
 */
int threads_vm_index(struct threads *t, int pid, __u64 kvm, __u64 born);
/* How many VMs (struct kvm) of process PID have been seen so far. */
size_t threads_process_vms(const struct threads *t, int pid);
/* Whether PID was seen and has exited since. */
bool threads_process_gone(const struct threads *t, int pid);
/* PID's VM name (its -name, ...; else the process name), or NULL if PID was never seen. */
const char *threads_vm_name(const struct threads *t, int pid);
/* The KubeVirt namespace of PID's VM into BUF (SIZE bytes); "" when it has none. */
void threads_vm_namespace(const struct threads *t, int pid, char *buf, size_t size);
/* The name of process PID as BPF saw it first, or NULL if it was never seen. */
const char *threads_process_name(const struct threads *t, int pid);
/* Processes first seen since the last call: *PIDS stays valid until the next poll or tick. */
size_t threads_take_new(struct threads *t, const int **pids);
/*
 * The row of VM INDEX of process TGID in M, named (PROCESS: its process
 * name as BPF saw it, if known) and marked gone as the registry knows it.
 */
struct vm_row *threads_model_vm(struct threads *t, struct model *m, int tgid, int index,
				const char *process);
/*
 * Adds F, the figures of thread KEY (named and placed by ID), to its row in M
 * and to its VM's total. Its row is its vCPU's (from BPF's vcpu_id, the /proc
 * map, or its name), else a row of its own.
 */
void threads_add_figures(struct threads *t, struct model *m, const struct kvmmmu_thread_key *key,
			 const struct kvmmmu_thread_id *id, const struct figures *f);
void threads_close(struct threads *t);

#endif
