/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector: chooses how to attach each probe on this kernel, loads and
 * attaches the BPF objects (bpf/faults.bpf.c, and with it the mmu_lock and
 * MMU-lifecycle objects of mmu_extras.h), and reads their maps into the model.
 */
#ifndef KVMMMU_COLLECTOR_H
#define KVMMMU_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel_btf.h"
#include "kprobes.h"
#include "model.h"
#include "probe_status.h"
#include "ret_pf.h"
#include "vcpu_map.h"

struct bpf_map;

enum probe_mode {
	PROBE_MODE_AUTO,
	PROBE_MODE_FENTRY,
	PROBE_MODE_KPROBE,
	PROBE_MODE_TRACEPOINT,
};

/* How threads are tied to vCPUs. */
enum attribution {
	ATTRIBUTE_AUTO, /* the vCPU the thread has loaded, from BPF (kvmmmu.bpf.h), else /proc */
	ATTRIBUTE_PROC, /* /proc only (KVM_RUN sightings, then "CPU N/KVM" names) */
};

#define COLLECTOR_MAX_PROBES 24
#define COLLECTOR_MAX_LINKS 64

struct collector_opts {
	enum probe_mode mode;
	enum attribution attribution;
	bool filter_pids;
	bool follow_forks; /* with filter_pids: a traced process's children are traced too */
	bool walk_hist;	   /* attach kvm_mmu_paging_element for walk_ns */
	/* with filter_pids, the processes traced from the start (in the filter before attach) */
	const int *pids;
	size_t n_pids;
	/* entries of each per-thread map; 0: from the host's thread count */
	unsigned int max_threads;
	/* time 1 fault in N for the latency histograms; 0 or 1: every fault */
	unsigned int sample_every;
	/* the lock and lifecycle objects cost events too: only when their figures are wanted */
	bool lock;   /* mmu_lock waits (bpf/mmu_lock.bpf.c) */
	bool events; /* the MMU lifecycle and its timeline (bpf/mmu_events.bpf.c) */
};

/* A thread that exited: its last figures, kept once its map entries are freed. */
struct retired_thread {
	struct kvmmmu_thread_key key;
	struct kvmmmu_thread_stats stats;
};

/*
 * Called when a traced thread exits, for the other objects to free their
 * entries too; GONE when its whole process has (KEY's tid is then 0): every
 * entry of KEY's tgid goes.
 */
typedef void (*collector_retire_fn)(void *ctx, const struct kvmmmu_thread_key *key, bool gone);
#define COLLECTOR_MAX_HOOKS 4

struct faults_bpf;
struct mmu_extras;

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
	char *vm_name;	    /* process: the VM's name (vm_name.h), read at its first sighting */
	struct vm_key *vms; /* process: its VMs, in the order seen (index - 1) */
	size_t n_vms;
	size_t ns_len; /* process: vm_name is "NAMESPACE/NAME" (KubeVirt), NAMESPACE this long */
};
struct bpf_link;
struct ring_buffer;

struct collector {
	struct collector_opts opts;
	struct faults_bpf *skel;
	struct kernel_btf kb;
	struct ret_pf_table ret_pf;
	struct probe_status probes[COLLECTOR_MAX_PROBES];
	size_t n_probes;
	bool func_mode;	 /* outcomes come from function probes */
	bool done_event; /* ... or from kvmmmu:kvm_mmu_page_fault_done (kernel-patches/) */
	struct bpf_link *links[COLLECTOR_MAX_LINKS];
	size_t n_links;
	struct kprobes kprobes;		      /* every object's kprobes and kretprobes */
	struct kvmmmu_lock_table *lock_table; /* the mmu_locks map, mmap()ed; NULL if not */
	struct vcpu_map vcpus;
	struct thread_name *names; /* (tgid, tid) -> comm, tid 0 for the process */
	size_t n_names, cap_names;
	void *name_index;	/* tsearch tree over names[], by (tgid, tid) */
	struct ring_buffer *rb; /* thread news (and the timeline, added by mmu_extras) */
	__u64 news_lost;	/* thread news lost, as last seen */
	int *new_procs;		/* processes first seen since collector_take_new() */
	size_t n_new_procs, cap_new_procs;
	unsigned int max_threads; /* entries of each per-thread map */
	bool prealloc_maps;	  /* before 6.1: per-thread maps preallocated */
	struct retired_thread *retired;
	size_t n_retired, cap_retired;
	struct {
		collector_retire_fn fn;
		void *ctx;
	} hooks[COLLECTOR_MAX_HOOKS];
	size_t n_hooks;
	/* every BPF object's health counters (mmap'ed .bss), summed into each model */
	const struct kvmmmu_health *health[COLLECTOR_MAX_HOOKS];
	size_t n_health;
	struct mmu_extras *extras; /* the other two objects, and the timeline */
};

/*
 * Decodes RET_PF_* (BTF, then tracefs), then chooses, loads and attaches the
 * faults object, then the others asked for (what fails of those is left off,
 * with reasons).
 */
int collector_open(struct collector *c, const struct collector_opts *opts);
/*
 * Sizes per-thread map MAP for the collector's threads. Before 6.1, hash
 * maps allocated at run time are unsafe in tracing programs (the verifier
 * warns and taints; PREEMPT_RT refuses them): there they are preallocated,
 * for at most KVMMMU_PREALLOC_THREADS threads.
 */
#define KVMMMU_PREALLOC_THREADS 1024
void collector_size_thread_map(const struct collector *c, struct bpf_map *map);
/*
 * Lets faults start counting, once every program of every object is
 * attached (they attach one by one: a request seen before its SPTE's
 * program was there would look spurious). Take KVM's baselines just before.
 */
void collector_arm(struct collector *c);
/* Adds PID to the BPF pid filter; its threads must not have run yet (see opts.pids). */
int collector_trace_pid(struct collector *c, int pid);
/*
 * Waits up to TIMEOUT_MS for BPF to announce new threads (and timeline
 * events), and names each one at once, reading /proc for its vCPU while it
 * is alive: a short VM is then named and attributed however fast it ends.
 * Returns the number of records handled, or a negative errno.
 */
int collector_poll(struct collector *c, int timeout_ms);
/* An fd that polls readable when BPF has news (for a caller's own poll loop). */
int collector_poll_fd(const struct collector *c);
/*
 * Handles what BPF announced, rescans the maps when announcements were lost,
 * and refreshes the /proc vCPU map of live VMs that need it. Call every tick.
 */
void collector_tick(struct collector *c);
/* The name of process PID as BPF saw it first, or NULL if it was never seen. */
const char *collector_process_name(const struct collector *c, int pid);
/* Processes first seen since the last call: *PIDS stays valid until the next poll or tick. */
size_t collector_take_new(struct collector *c, const int **pids);
/* Every object's health counters, summed. */
void collector_health_sum(const struct collector *c, struct kvmmmu_health *sum);
/* Runs of the fault programs the kernel skipped (recursion on one CPU), from their prog info. */
__u64 collector_prog_missed(const struct collector *c);
/* Another BPF object sharing the collector's maps: its exits hook and its health counters. */
int collector_add_object(struct collector *c, collector_retire_fn fn, void *ctx,
			 const struct kvmmmu_health *health);
/*
 * Reads every thread's figures of every object into M (which must be empty).
 * FINAL resolves faults still waiting for an SPTE as spurious: at the end
 * nothing follows them.
 */
int collector_read(struct collector *c, struct model *m, bool final);
void collector_close(struct collector *c);
/*
 * Adds F, the figures of thread KEY (named and placed by ID), to its row in M
 * and to its VM's total. Its row is its vCPU's (from BPF's vcpu_id, the /proc
 * map, or its name), else a row of its own.
 */
void collector_add_figures(struct collector *c, struct model *m,
			   const struct kvmmmu_thread_key *key, const struct kvmmmu_thread_id *id,
			   const struct figures *f);
/*
 * The row of VM INDEX of process TGID in M, named (PROCESS: its process
 * name as BPF saw it, if known) and marked gone as the collector knows it.
 */
struct vm_row *collector_model_vm(struct collector *c, struct model *m, int tgid, int index,
				  const char *process);

/*
 * fentry, kprobe or nothing for FUNC in this kernel and probe mode: BTF,
 * exact kallsyms name, then a trial fentry attach; WHY says what is not used.
 */
enum attach_kind collector_choose_function(struct collector *c, const char *func, char *why,
					   size_t len);
int probe_mode_parse(const char *s, enum probe_mode *mode);
/* Whether a histogram can be filled with what is attached. */
bool collector_hist_available(const struct collector *c, int hist, const char **why);
/* Attaches BP of any object: kprobes through the collector's tracefs events (kprobes.h). */
struct bpf_link *collector_attach_program(struct collector *c, struct bpf_program *bp);
/*
 * PID has exited and its last figures were reported: it leaves the collector
 * (bounded state), its timeline events too; *TIMELINE_SEEN, the caller's
 * index of events already shown, moves back by the shown ones that went.
 */
void collector_forget_process(struct collector *c, int pid, size_t *timeline_seen);
/* The timeline events already shown go, but each VM's latest (timeline_trim). */
void collector_trim_timeline(struct collector *c, size_t *timeline_seen);
/* The timeline stays under TIMELINE_MAX_EVENTS events (timeline_cap). */
void collector_cap_timeline(struct collector *c, size_t *timeline_seen);
/* Whether PID was seen and has exited since. */
bool collector_process_gone(const struct collector *c, int pid);
/*
 * Which of process PID's VMs the struct kvm at KVM, made at BORN, is: 1 for
 * the first seen, 2 for the next, ... (bpf's struct kvmmmu_thread_id). KVM 0
 * (a thread that is no vCPU and changed no VM) is the first.
 */
int collector_vm_index(struct collector *c, int pid, __u64 kvm, __u64 born);
/* How many VMs (struct kvm) of process PID BPF has seen so far. */
size_t collector_process_vms(const struct collector *c, int pid);
/* PID's VM name (its -name, ...; else the process name), or NULL if PID was never seen. */
const char *collector_vm_name(const struct collector *c, int pid);
/* The KubeVirt namespace of PID's VM into BUF (SIZE bytes); "" when it has none. */
void collector_vm_namespace(const struct collector *c, int pid, char *buf, size_t size);
const struct probe_status *collector_probe(const struct collector *c, const char *name);

#endif
