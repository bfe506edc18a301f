/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A snapshot as Prometheus metric families (docs/exporter.md): per VM,
 * counters and histograms in base units, "pid" only on kvmmmu_vm_info.
 * Pure, like the other renderers: the exporter adds only what a snapshot
 * cannot know (its own build, the scrape's duration, BPF run time).
 */
#ifndef KVMMMU_RENDER_PROM_H
#define KVMMMU_RENDER_PROM_H

#include <stdbool.h>
#include <stddef.h>

#include "prom_text.h"
#include "snapshot.h"

/* Groups of families, each turned on or off with --[no-]collector.NAME. */
enum prom_collector {
	PROM_FAULTS,
	PROM_LATENCY,
	PROM_MMU_LOCK,
	PROM_MEMSLOT,
	PROM_MMU_EVENTS,
	PROM_KVM_STATS,
	PROM_PER_VCPU,
	PROM_N_COLLECTORS,
};
extern const char *const prom_collector_names[PROM_N_COLLECTORS];

struct prom_opts {
	bool collector[PROM_N_COLLECTORS];
};

/* Defaults: every collector but per_vcpu. */
void prom_opts_default(struct prom_opts *o);
/* NAME's index, or -1. */
int prom_collector_index(const char *name);

/*
 * What the families need beyond one snapshot: the dirty-log toggle
 * durations of each VM, gathered from the timeline of every snapshot.
 */
struct prom_toggles {
	int pid, index; /* the VM: process and which of its VMs */
	struct kvmmmu_hist on, off;
};

struct prom_state {
	struct prom_toggles *vms;
	size_t n_vms, cap_vms;
};

/* Adds SNAP's new timeline events to ST; 0 or -ENOMEM. */
int prom_state_update(struct prom_state *st, const struct snapshot *snap);
/* PID has left the session: its figures go. */
void prom_state_forget(struct prom_state *st, int pid);
void prom_state_free(struct prom_state *st);

/* Whether collector C has figures in SNAP (kvmmmu_scrape_collector_success). */
bool prom_collector_ok(const struct snapshot *snap, enum prom_collector c);

/* The faults' access kinds, entries and mapping levels of SNAP's VMs, labelled VM[i]
 * (render_prom_faults.c). */
void render_prom_fault_kinds(struct prom_writer *w, const struct snapshot *snap,
			     const char *const *vm);
/* KVM's statistics of SNAP's VMs into W, labelled VM[i] (render_prom_kvm.c). */
void render_prom_kvm_stats(struct prom_writer *w, const struct snapshot *snap,
			   const char *const *vm);

/*
 * SNAP's families into W: the VMs' (per the collectors of O), their info,
 * which probes attached, what was dropped. Errors stay in W (prom_finish).
 */
void render_prom(struct prom_writer *w, const struct snapshot *snap, const struct prom_state *st,
		 const struct prom_opts *o);

#endif
