/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_SNAPSHOT_H
#define KVMMMU_SNAPSHOT_H

/*
 * A snapshot: plain data, complete in itself, that renderers take and
 * nothing else. The figures per VM and vCPU since tracing started, how they
 * were had (probes, RET_PF_* names, what cannot be shown), KVM's own
 * counters as read just after, the timeline, and what was lost.
 */
#include <stdbool.h>
#include <stddef.h>

#include "csv.h"
#include "model.h"
#include "probe_status.h"
#include "regions.h"
#include "ret_pf_table.h"
#include "timeline.h"
#include "vm_stats.h"

struct snapshot {
	double wall;	 /* when it was taken, seconds since the epoch */
	__u64 traced_ns; /* how long counting had run then (0: not known, as in CSV v1) */
	struct model m;
	/* how the figures were had */
	bool func_mode;	 /* outcomes from function return values, not tracepoints */
	bool done_event; /* ... from kvmmmu:kvm_mmu_page_fault_done (kernel-patches/) */
	struct ret_pf_table ret_pf;
	bool hist_available[KVMMMU_N_HISTS];
	const char *hist_why[KVMMMU_N_HISTS]; /* why not (static text) */
	struct probe_status *probes;	      /* every object's */
	size_t n_probes, n_collector_probes;  /* the collector's come first */
	bool lock_ok, events_ok;	      /* the mmu_lock / lifecycle objects are there */
	unsigned int sample_every;	      /* 1 fault in N timed; 1: every fault */
	bool slow_stacks; /* --stack: slow faults' records say where they waited off the CPU */
	/* KVM's counters of the VMs seen (copies, no fds), read kvm_read_gap after kvmmmu's */
	struct vm_stats *kvm;
	size_t n_kvm;
	double kvm_read_gap;
	/* the timeline: every event so far; those from timeline_new on are new since the last
	 * snapshot */
	struct timeline_event *timeline;
	size_t n_timeline, timeline_new;
	struct regions
		regions; /* --metric regions: faults per memslot and region, since the start */
	__u64 timeline_capped; /* the oldest events that were not kept (TIMELINE_MAX_EVENTS) */
	/* a snapshot read from CSV: the counters its file did not have (an older kvmmmu's) */
	bool counter_absent[KVMMMU_N_COUNTERS];
	/* ... and the histograms whose max it did not have (no NAME_max row) */
	bool hist_max_absent[KVMMMU_N_HISTS];
	/* a snapshot read from CSV: the VM names its rows point at */
	char **names;
	size_t n_names;
};

/* KVM's counters of PID in SNAP, or NULL. */
const struct vm_stats *snapshot_kvm(const struct snapshot *snap, int pid);
/*
 * KVM's counters of VM, or NULL: also when its process holds several VMs,
 * whose statistics kvmmmu cannot yet tell apart (snapshot_kvm_shared()).
 */
const struct vm_stats *snapshot_vm_kvm(const struct snapshot *snap, const struct vm_row *vm);
bool snapshot_kvm_shared(const struct snapshot *snap, const struct vm_row *vm);
/* How reports name VM: "VM pid N", and "VM pid N #I" when its process holds several. */
void snapshot_vm_place(const struct snapshot *snap, const struct vm_row *vm, char *buf,
		       size_t size);
void snapshot_free(struct snapshot *snap);
/*
 * The figures of a kvmmmu CSV file (csv.h), as a snapshot: every VM's and
 * vCPU's last values (rows are cumulative), RET_PF_* names as written, the
 * histograms rebuilt from their buckets, what was lost. KVM's and
 * kvmmmu-load's own rows stay in the table. 0, or -ENOMEM.
 */
/*
 * -EINVAL, with "line N: reason" in ERR, for a row kvmmmu cannot have written:
 * every figure of source bpf is a count, a non-negative integer.
 */
int snapshot_from_csv(const struct csv_table *t, struct snapshot *snap, char *err, size_t err_len);

#endif
