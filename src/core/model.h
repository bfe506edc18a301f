/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data model: per-thread BPF figures folded into vCPUs and VMs, with the
 * arithmetic every renderer needs (sums, interval deltas, percentiles).
 */
#ifndef KVMMMU_MODEL_H
#define KVMMMU_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "catalogue.h"
#include "kvmmmu.h"

extern const char *const kvmmmu_lock_hist_names[KVMMMU_LOCK_MODES];
/* "fast", "tdp_mmu", "shadow", "direct" */
extern const char *const kvmmmu_fault_path_names[KVMMMU_N_FAULT_PATHS];
/* A fault's phases (enum kvmmmu_phase): their names ("walk", "pfn", "mmu_lock", ...) and hists. */
extern const char *const kvmmmu_phase_names[KVMMMU_N_PHASES];
extern const int kvmmmu_phase_hist[KVMMMU_N_PHASES];

/* Time the kernel spent in dirty-log calls and root loads, all calls summed (ns). */
enum mmu_time {
	DIRTY_LOG_ENABLE_NS,
	DIRTY_LOG_DISABLE_NS,
	DIRTY_LOG_GET_NS,
	DIRTY_LOG_CLEAR_NS,
	ROOT_LOAD_NS,
	N_MMU_TIMES,
};
extern const char *const mmu_time_names[N_MMU_TIMES];

struct figures {
	__u64 counters[KVMMMU_N_COUNTERS];
	__u64 ret_pf[KVMMMU_RET_PF_SLOTS];
	__u64 outcomes[KVMMMU_N_FAULT_PATHS][KVMMMU_RET_PF_SLOTS]; /* by path, then RET_PF_* */
	struct kvmmmu_hist hist[KVMMMU_N_HISTS];
	/* kvm->mmu_lock waits by mode: inside faults, and elsewhere */
	struct kvmmmu_hist lock_wait[KVMMMU_LOCK_MODES];
	__u64 lock_other_waits[KVMMMU_LOCK_MODES];
	__u64 lock_other_wait_ns[KVMMMU_LOCK_MODES];
	/* MMU lifecycle and dirty logging */
	__u64 mmu[KVMMMU_N_MMU_COUNTERS];
	__u64 mmu_ns[N_MMU_TIMES];
};

/*
 * The histogram F's phases divide (KVMMMU_HIST_FAULT or _WALK_TO_SPTE): the
 * one whose time the phases add up to, as each timed fault closes its
 * phases against it (function probes: the whole fault; the tracepoint
 * model, done-event mode too: the walk to the SPTE).
 */
int figures_phase_whole(const struct figures *f);

/* A vCPU, or a thread that could not be tied to one (vcpu < 0, tid set). */
struct vcpu_row {
	int vcpu;
	int tid;
	char comm[16];
	struct figures f;
};

struct vm_row {
	int pid;
	/*
	 * Which of the process's VMs (struct kvm) this is: 1 for its first, in
	 * the order kvmmmu saw them. Most VMMs hold one; KVM's selftests make
	 * several in turn.
	 */
	int index;
	char comm[16];
	const char *name;   /* the VM's name (owned by the collector), NULL: unknown */
	char namespace[64]; /* KubeVirt's namespace (the start of name), or "" */
	bool gone;	    /* the VMM has exited: these are its last figures */
	struct figures total;
	struct vcpu_row *rows; /* sorted: vCPUs by id, then threads by tid */
	size_t n_rows, cap_rows;
};

struct model {
	struct vm_row *vms; /* sorted by pid */
	size_t n_vms, cap_vms;
	struct kvmmmu_health health;
};

/* The health counters (what was lost), by their names in CSV and as a Prometheus reason. */
struct health_field {
	const char *metric, *reason;
	size_t offset; /* in struct kvmmmu_health */
};
#define N_HEALTH_FIELDS 13
extern const struct health_field health_fields[N_HEALTH_FIELDS];
static inline __u64 health_value(const struct kvmmmu_health *h, const struct health_field *f)
{
	return *(const __u64 *)((const char *)h + f->offset);
}

/* Where the figures of VM INDEX (1: the first) of process PID go. */
struct vm_row *model_vm(struct model *m, int pid, int index);
/* A new row for that VM, which the caller knows M does not have (no search). */
struct vm_row *model_vm_add(struct model *m, int pid, int index);
/* The row of VM INDEX of PID, or NULL; never adds one. */
const struct vm_row *model_find_vm(const struct model *m, int pid, int index);
/* How many VMs of process PID M has: more than one, and each is named by its index too. */
size_t model_process_vms(const struct model *m, int pid);
struct vcpu_row *model_row(struct vm_row *vm, int vcpu, int tid);
void model_sort(struct model *m);
void model_free(struct model *m);

void figures_add(struct figures *dst, const struct figures *src);
/*
 * DST = CUR - PREV for counters and buckets; a histogram's max_ns is CUR's if
 * it falls in the difference's highest bucket, else that bucket's upper bound.
 */
void figures_sub(struct figures *dst, const struct figures *cur, const struct figures *prev);
/* A copy of CUR minus PREV, matched by pid and vCPU/thread; rows new in CUR are kept whole. */
int model_delta(struct model *dst, const struct model *cur, const struct model *prev);
int model_copy(struct model *dst, const struct model *src);

/* Value at or under which a fraction P (0..1] of samples fall: a bucket bound, capped by max. */
__u64 hist_percentile(const struct kvmmmu_hist *h, double p);
/* Index of a counter or histogram by name; -1 when unknown. */
int counter_index(const char *name);
/* The path of "outcome_PATH_RET" metric METRIC and where RET starts; -1 if not one. */
int outcome_metric_path(const char *metric, const char **ret_name);
int hist_index(const char *name);

#endif
