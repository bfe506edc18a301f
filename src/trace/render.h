/* SPDX-License-Identifier: GPL-2.0 */
/* Renderers: the text report (tables, log2 histograms, percentiles) and CSV v1 rows. */
#ifndef KVMMMU_RENDER_H
#define KVMMMU_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "collector.h"
#include "csv.h"
#include "mmu_extras.h"
#include "model.h"
#include "vm_stats.h"

enum section {
	SECTION_OUTCOMES, /* faults and RET_PF_* */
	SECTION_PATHS,
	SECTION_MEMSLOT,
	SECTION_EVENTS,	  /* raw tracepoint counts */
	SECTION_KVM,	  /* KVM's own counters, through pidfd_getfd */
	SECTION_LOCK,	  /* kvm->mmu_lock waits */
	SECTION_MMU,	  /* shadow pages, splits, zaps, dirty-log calls */
	SECTION_TIMELINE, /* memslot and dirty-log events, with the faults between them */
	SECTION_HIST0,	  /* + enum kvmmmu_hist_id */
	N_SECTIONS = SECTION_HIST0 + KVMMMU_N_HISTS,
};

struct render_opts {
	const struct collector *c;
	bool show[N_SECTIONS];
	bool per_vcpu;
	int only_vcpu;			 /* -1: all */
	bool hide_idle;			 /* leave out VMs with no event (interval reports) */
	const struct mmu_extras *extras; /* lock and lifecycle probes, timeline; may be NULL */
	size_t csv_timeline_done;	 /* timeline events already written as CSV rows */
	size_t timeline_from;		 /* text: timeline events before this were printed */
	const struct vm_stats *kvm;	 /* KVM's counters per VM, for SECTION_KVM and CSV */
	size_t n_kvm;
	bool kvm_since_mark; /* text: KVM's counts over the interval, like kvmmmu's */
	double kvm_read_gap; /* seconds between kvmmmu's read and KVM's */
	double unit_ns;	     /* 1, 1e3 or 1e6 */
	const char *unit;    /* "nsecs", "usecs", "msecs" */
};

/* Parses a --metric list into SHOW; returns -EINVAL with the bad name in *bad. */
int render_parse_metrics(const char *list, bool show[N_SECTIONS], const char **bad);
const char *section_name(int section);

/* The lines that say what is attached and how. */
void render_probe_header(FILE *f, const struct render_opts *o);
/* One compact block: what could not be attached (one line per reason) and what cannot be shown. */
void render_unavailable(FILE *f, const struct render_opts *o);
void render_text(FILE *f, const struct model *m, const struct render_opts *o);
/* Prints a histogram folded into log2 rows with count bars, then its percentiles. */
void render_hist(FILE *f, const struct kvmmmu_hist *h, const char *title,
		 const struct render_opts *o);

/* KVM's statistics for PID, or NULL. */
const struct vm_stats *render_kvm_stats(const struct render_opts *o, int pid);

/* CSV v1 rows (source=bpf, and source=kvm_stats) for every VM, vCPU and unattributed thread. */
int render_csv(struct csv_writer *w, const struct model *m, struct render_opts *o, double ts);

#endif
