// SPDX-License-Identifier: GPL-2.0
/*
 * Where a fault's time goes (--metric phases): the guest walk, the host
 * page, the mmu_lock waits, the mapping and the rest, each as a share of
 * the faults' time, in the text report and kvmmmu-top's vCPU view.
 */
#include "render.h"

/* How each phase (enum kvmmmu_phase) is measured, with function probes and with tracepoints. */
static const struct {
	const char *how_functions, *how_tracepoints; /* NULL: not measured that way */
} phases[KVMMMU_N_PHASES] = {
	[KVMMMU_PHASE_WALK] = {"FNAME(walk_addr_generic), entry to exit",
			       "kvm_mmu_pagetable_walk to its last kvm_mmu_paging_element"},
	[KVMMMU_PHASE_PFN] = {"kvm_faultin_pfn, entry to exit", NULL},
	[KVMMMU_PHASE_LOCK] = {"lock:contention_begin to _end, summed",
			       "lock:contention_begin to _end, summed"},
	[KVMMMU_PHASE_MAP] = {"kvm_mmu_spte_requested to the fault's kvm_mmu_set_spte",
			      "kvm_mmu_spte_requested to the fault's kvm_mmu_set_spte"},
	[KVMMMU_PHASE_OTHER] = {"the rest of kvm_mmu_page_fault",
				"the rest of the walk-to-SPTE time"},
};

bool render_wants_phases(const bool show[N_SECTIONS])
{
	if (show[SECTION_PHASES])
		return true;
	for (size_t i = 0; i < KVMMMU_N_PHASES; i++)
		if (show[SECTION_HIST0 + kvmmmu_phase_hist[i]])
			return true;
	return false;
}

/* The time the phases divide (figures_phase_whole()), and what to call it. */
static const struct kvmmmu_hist *phases_whole(const struct figures *fg, const char **what)
{
	int h = figures_phase_whole(fg);

	*what = h == KVMMMU_HIST_FAULT ? "fault time" : "walk-to-SPTE time";
	return &fg->hist[h];
}

void render_phases_header(FILE *f, const struct snapshot *snap)
{
	const char *sep = "";

	fprintf(f, "Phases of a fault (%s):\n",
		snap->func_mode
			? "each timed kvm_mmu_page_fault"
			: "tracepoints: each timed shadow-paging fault, its walk to its SPTE; a "
			  "TDP fault shows no start");
	for (size_t i = 0; i < KVMMMU_N_PHASES; i++) {
		const char *how =
			snap->func_mode ? phases[i].how_functions : phases[i].how_tracepoints;

		if (snap->hist_available[kvmmmu_phase_hist[i]] && how)
			fprintf(f, "    %-9s %s\n", kvmmmu_phase_names[i], how);
	}
	for (size_t i = 0; i < KVMMMU_N_PHASES; i++) {
		int h = kvmmmu_phase_hist[i];

		if (snap->hist_available[h])
			continue;
		fprintf(f, "%s %s (%s)", *sep ? ";" : "    not measured:", kvmmmu_phase_names[i],
			snap->hist_why[h] ? snap->hist_why[h] : "not available");
		sep = ";";
	}
	if (*sep)
		fputc('\n', f);
}

void render_phases(FILE *f, const struct figures *fg, const struct snapshot *snap,
		   const struct render_opts *o)
{
	const char *what;
	const struct kvmmmu_hist *whole = phases_whole(fg, &what);
	char total[32];
	bool any = false;

	for (size_t i = 0; i < KVMMMU_N_PHASES; i++)
		any |= snap->hist_available[kvmmmu_phase_hist[i]];
	if (!any)
		return; /* not asked for when the run was made: its header says so */
	if (!whole->count) {
		fprintf(f, "    phases: no timed fault\n");
		return;
	}
	fprintf(f, "    phases of %llu timed faults (%s of %s):\n",
		(unsigned long long)whole->count, render_scaled_ns(total, whole->sum_ns), what);
	fprintf(f, "      %-9s %10s %7s %10s %10s %10s  (%s)\n", "phase", "faults", "share", "mean",
		"p50", "p99", o->unit);
	for (size_t i = 0; i < KVMMMU_N_PHASES; i++) {
		const struct kvmmmu_hist *h = &fg->hist[kvmmmu_phase_hist[i]];

		if (!snap->hist_available[kvmmmu_phase_hist[i]]) {
			fprintf(f, "      %-9s %10s %7s  (not measured)\n", kvmmmu_phase_names[i],
				"-", "-");
			continue;
		}
		fprintf(f, "      %-9s %10llu %6.1f%%", kvmmmu_phase_names[i],
			(unsigned long long)h->count,
			100.0 * (double)h->sum_ns / (double)whole->sum_ns);
		if (h->count)
			fprintf(f, " %10.1f %10.1f %10.1f",
				(double)h->sum_ns / (double)h->count / o->unit_ns,
				(double)hist_percentile(h, 0.5) / o->unit_ns,
				(double)hist_percentile(h, 0.99) / o->unit_ns);
		fputc('\n', f);
	}
}
