/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Renderers: the text report (tables, log2 histograms, percentiles) and CSV
 * rows; the Prometheus exposition is render_prom.h's. They take snapshots
 * (snapshot.h) and options, and nothing live.
 */
#ifndef KVMMMU_RENDER_H
#define KVMMMU_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "csv.h"
#include "model.h"
#include "slow_faults.h"
#include "snapshot.h"

enum section {
	SECTION_OUTCOMES, /* faults and RET_PF_* */
	SECTION_PATHS,
	SECTION_ACCESS, /* read/write/fetch, not present/protection */
	SECTION_LEVELS, /* mapping levels requested and installed, why not huge */
	SECTION_MEMSLOT,
	SECTION_EVENTS,	  /* raw tracepoint counts */
	SECTION_KVM,	  /* KVM's own counters, through pidfd_getfd */
	SECTION_LOCK,	  /* kvm->mmu_lock waits */
	SECTION_MMU,	  /* shadow pages, splits, zaps, dirty-log calls */
	SECTION_TIMELINE, /* memslot and dirty-log events, with the faults between them */
	SECTION_PHASES,	  /* where the faults' time goes: walk, pfn, mmu_lock, map, other */
	SECTION_REGIONS,  /* faults per memslot and guest-physical region */
	SECTION_HIST0,	  /* + enum kvmmmu_hist_id */
	N_SECTIONS = SECTION_HIST0 + KVMMMU_N_HISTS,
};

struct render_opts {
	bool show[N_SECTIONS];
	bool per_vcpu;
	int only_vcpu;	  /* -1: all */
	bool hide_idle;	  /* leave out VMs with no event (interval reports) */
	double unit_ns;	  /* 1, 1e3 or 1e6 */
	const char *unit; /* "nsecs", "usecs", "msecs" */
};

/*
 * What kvmmmu-hist shows without --metric, and the word "default" in a list.
 * Not memslot and memslot_ns: with function probes their probe runs twice a
 * memslot lookup, several lookups a fault under shadow paging, three times
 * the rest of the default's program runs (docs/performance.md).
 */
#define RENDER_DEFAULT_METRICS                                                                     \
	"outcomes,paths,access,levels,kvm_stats,mmu_lock,mmu,timeline,fault_ns,fast_path_ns,"      \
	"slow_path_ns,walk_to_spte_ns"

/*
 * Parses a --metric list ("all", "default" and section names, additive) into
 * SHOW; returns -EINVAL with the bad name in *bad.
 */
int render_parse_metrics(const char *list, bool show[N_SECTIONS], const char **bad);
const char *section_name(int section);

/* A duration in the unit that suits it: "785.7 ms", "12.3 us", "940 ns". */
const char *render_scaled_ns(char buf[32], __u64 ns);
/* Whether SHOW asks for the phases of a fault: the breakdown, or one of their histograms. */
bool render_wants_phases(const bool show[N_SECTIONS]);
/* How each phase is measured here, or why it is not (the header, with --metric phases). */
void render_phases_header(FILE *f, const struct snapshot *snap);
/* FG's faults' time by phase: each one's share of the fault time, its count and p50/p99. */
void render_phases(FILE *f, const struct figures *fg, const struct snapshot *snap,
		   const struct render_opts *o);

/* --metric regions: VM's most faulted regions (text), every region's faults as CSV rows. */
void render_regions(FILE *f, const struct snapshot *snap, const struct vm_row *vm);
/* --metric regions: under a timeline event, the regions of the faults before it (SIZE each). */
void render_storm(FILE *f, const struct timeline_event *t, __u64 size);
int render_csv_regions(struct csv_writer *w, const struct snapshot *snap, struct csv_row *row,
		       const struct vm_row *vm);
/* kvmmmu-hist --slower: the column header, then one line per slow fault of L. */
void render_slow_header(FILE *f, const struct snapshot *facts, __u64 slower_ns);
void render_slow(FILE *f, const struct slow_faults *l, const struct snapshot *facts);
/* ... and as CSV rows (source "slow"), with the fault's own time. */
int render_csv_slow(struct csv_writer *w, const struct slow_faults *l,
		    const struct snapshot *facts);

/* The lines that say what is attached and how. */
void render_probe_header(FILE *f, const struct snapshot *snap);
/* One compact block: what could not be attached (one line per reason) and what cannot be shown. */
void render_unavailable(FILE *f, const struct snapshot *snap, const struct render_opts *o);
/*
 * The report of CUR: since PREV (its figures and KVM's, the interval), or
 * the whole run when PREV is NULL. Timeline events: those new in CUR.
 */
void render_text(FILE *f, const struct snapshot *cur, const struct snapshot *prev,
		 const struct render_opts *o);
/* Prints a histogram folded into log2 rows with count bars, then its percentiles. */
void render_hist(FILE *f, const struct kvmmmu_hist *h, const char *title,
		 const struct render_opts *o);
/* The same as its log-linear buckets, the non-empty ones (kvmmmu-top's vCPU view). */
void render_hist_buckets(FILE *f, const struct kvmmmu_hist *h, const char *title,
			 const struct render_opts *o);

/*
 * CSV rows (source=bpf, and source=kvm_stats) of SNAP for every VM, vCPU and
 * unattributed thread: cumulative, like counters; its new timeline events.
 */
int render_csv(struct csv_writer *w, const struct snapshot *snap);

#endif
