/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every source (a BPF object and its reading: source_faults.c,
 * source_lock.c, source_events.c) is given: what to trace, how to size the
 * per-thread maps, and the faults object's maps the others share (one pid
 * filter, one thread-news ring, one set of seen processes, one mmu_lock
 * table, one record of VMs' births).
 */
#ifndef KVMMMU_SOURCE_H
#define KVMMMU_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

#include "attach.h"
#include "kvmmmu.h"

struct bpf_map;

/* How threads are tied to vCPUs. */
enum attribution {
	ATTRIBUTE_AUTO, /* the vCPU the thread has loaded, from BPF (kvmmmu.bpf.h), else /proc */
	ATTRIBUTE_PROC, /* /proc only (KVM_RUN sightings, then "CPU N/KVM" names) */
};

struct collector_opts {
	enum probe_mode mode;
	enum attribution attribution;
	bool filter_pids;
	bool follow_forks; /* with filter_pids: a traced process's children are traced too */
	bool phases;	   /* --metric phases: the phases of each fault (its probes) */
	__u64 slower_ns;   /* kvmmmu-hist --slower: report faults at least this long; 0: off */
	bool slow_stacks;  /* --stack: ... with the kernel stack of its longest wait off the CPU */
	bool memslot_off;  /* no memslot figures: kvm_vcpu_gfn_to_memslot is not probed */
	/* no event counts: function probes and the done event attach no model-only tracepoint */
	bool event_counts_off;
	/* no levels requested, why not huge: the done event attaches no kvm_mmu_spte_requested */
	bool levels_off;
	/* the options that turn them and the phases on (session_opts); NULL: --metric's */
	const char *memslot_option, *phases_option;
	unsigned int region_shift; /* --metric regions: log2 of a region's size; 0: off */
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

/* A tracepoint a source attaches where the kernel has it (kvmmmu-check lists them). */
struct source_tracepoint {
	const char *group, *event;
	const char *source; /* "faults", "events" */
};

/* The faults object's maps, by fd, for the other objects to reuse. */
struct shared_maps {
	int traced_pids, thread_stats, thread_news, seen_procs, mmu_locks, vm_births;
};

struct thread_maps {
	unsigned int max_threads; /* entries of each per-thread map */
	bool prealloc;		  /* before 6.1: preallocated, KVMMMU_PREALLOC_THREADS at most */
};

/*
 * Before 6.1, hash maps allocated at run time are unsafe in tracing
 * programs (the verifier warns and taints; PREEMPT_RT refuses them): there
 * per-thread maps are preallocated, for at most this many threads.
 */
#define KVMMMU_PREALLOC_THREADS 1024

/* The sizes for this kernel and host (MAX_THREADS 0: from the host's thread count). */
void thread_maps_init(struct thread_maps *t, unsigned int max_threads);
/* Sizes per-thread map MAP of any object. */
void thread_maps_size(const struct thread_maps *t, struct bpf_map *map);

/*
 * Makes an object's copies of the shared maps the faults object's (each
 * handle the object's map of that name), before it loads. 0 or -errno.
 */
int shared_maps_reuse(const struct shared_maps *m, struct bpf_map *traced_pids,
		      struct bpf_map *thread_stats, struct bpf_map *thread_news,
		      struct bpf_map *seen_procs, struct bpf_map *mmu_locks,
		      struct bpf_map *vm_births);

/*
 * Exited threads' last figures, kept in user space once their entries of a
 * per-thread map are freed: records of RECORD_SIZE bytes, a key first and
 * the map's value at VALUE_OFFSET.
 */
struct retired_set {
	void *records;
	size_t n, cap;
	size_t record_size, value_offset;
};
/* Moves KEY's entry of per-thread map MAP (fd) into S. */
void retired_add(struct retired_set *s, int map, const struct kvmmmu_thread_key *key);
/* ... every entry of process TGID. */
void retired_add_process(struct retired_set *s, int map, __u32 tgid);
/* PID's records go (they were reported). */
void retired_forget(struct retired_set *s, int pid);
static inline const void *retired_record(const struct retired_set *s, size_t i)
{
	return (const char *)s->records + i * s->record_size;
}
void retired_free(struct retired_set *s);

struct threads;
struct model;
/* Places one entry of a per-thread map (its VALUE) in M, through the registry. */
typedef void (*source_add_fn)(struct threads *threads, struct model *m,
			      const struct kvmmmu_thread_key *key, const void *value);
/*
 * Reads per-thread map MAP (values of VALUE_SIZE bytes) into M with ADD,
 * then the exited threads' records of RETIRED; 0 or -errno.
 */
int source_read_map(int map, size_t value_size, const struct retired_set *retired,
		    source_add_fn add, struct threads *threads, struct model *m);

/* Everything a source needs to open. */
struct source_env {
	const struct collector_opts *opts;
	struct attach_engine *engine;
	struct thread_maps sizes;
	struct shared_maps maps; /* valid once the faults object is loaded */
	bool func_mode; /* outcomes come from function probes (the faults object's choice) */
};

#endif
