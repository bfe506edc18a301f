// SPDX-License-Identifier: GPL-2.0
/*
 * The text report's sections of one VM, vCPU or thread: outcomes, paths,
 * access kinds, mapping levels, memslot lookups, events, KVM's counts,
 * mmu_lock waits, MMU work, then the phases and histograms that were asked for;
 * and render_scaled_ns(), the format of a duration they and the phases share.
 */
#include "render_text_internal.h"

const char *render_scaled_ns(char buf[32], __u64 ns)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, 32, "%.2f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, 32, "%.1f ms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, 32, "%.1f us", ns / 1e3);
	else
		snprintf(buf, 32, "%llu ns", (unsigned long long)ns);
	return buf;
}

static double pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void render_outcomes(FILE *f, const struct figures *fg, const struct ret_pf_table *names)
{
	__u64 faults = fg->counters[KVMMMU_FAULTS];

	fprintf(f, "    %-24s %12llu\n", "faults", (unsigned long long)faults);
	for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++) {
		char name[48];

		if (!names->name[r])
			continue;
		if (!fg->ret_pf[r] && !ret_pf_listed_when_zero(names->name[r]))
			continue;
		snprintf(name, sizeof(name), "ret_pf_%s", names->name[r]);
		fprintf(f, "    %-24s %12llu %6.1f%%\n", name, (unsigned long long)fg->ret_pf[r],
			pct(fg->ret_pf[r], faults));
	}
}

static void render_paths(FILE *f, const struct figures *fg)
{
	static const int paths[] = {KVMMMU_PATH_FAST, KVMMMU_PATH_TDP_MMU, KVMMMU_PATH_SHADOW,
				    KVMMMU_PATH_DIRECT};
	__u64 total = 0;

	for (size_t i = 0; i < 4; i++)
		total += fg->counters[paths[i]];
	fprintf(f, "    path:");
	for (size_t i = 0; i < 4; i++)
		fprintf(f, " %s %llu (%.1f%%)", kvmmmu_counter_names[paths[i]] + 5,
			(unsigned long long)fg->counters[paths[i]],
			pct(fg->counters[paths[i]], total));
	fputc('\n', f);
}

/* The faults by access kind: the error code's read, write or fetch, and present bit. */
static void render_access(FILE *f, const struct figures *fg, const struct snapshot *snap)
{
	__u64 faults = fg->counters[KVMMMU_FAULTS];
	__u64 unknown = fg->counters[KVMMMU_ACCESS_UNKNOWN];

	if (snap->counter_absent[KVMMMU_ACCESS_READ]) {
		fprintf(f, "    access: unavailable (not in this run's figures)\n");
		return;
	}
	fprintf(f, "    access: read %llu (%.1f%%) write %llu (%.1f%%) fetch %llu (%.1f%%); ",
		(unsigned long long)fg->counters[KVMMMU_ACCESS_READ],
		pct(fg->counters[KVMMMU_ACCESS_READ], faults),
		(unsigned long long)fg->counters[KVMMMU_ACCESS_WRITE],
		pct(fg->counters[KVMMMU_ACCESS_WRITE], faults),
		(unsigned long long)fg->counters[KVMMMU_ACCESS_FETCH],
		pct(fg->counters[KVMMMU_ACCESS_FETCH], faults));
	fprintf(f, "not present %llu (%.1f%%) protection %llu (%.1f%%)",
		(unsigned long long)fg->counters[KVMMMU_ACCESS_NOT_PRESENT],
		pct(fg->counters[KVMMMU_ACCESS_NOT_PRESENT], faults),
		(unsigned long long)fg->counters[KVMMMU_ACCESS_PRESENT],
		pct(fg->counters[KVMMMU_ACCESS_PRESENT], faults));
	if (unknown)
		fprintf(f, "; not seen %llu (%.1f%%)", (unsigned long long)unknown,
			pct(unknown, faults));
	fputc('\n', f);
}

/*
 * Mapping levels: what the faults that requested an SPTE asked for and got,
 * and why a 4 KiB one was not huge where the guest's own mapping allowed it.
 */
static void render_levels(FILE *f, const struct figures *fg, const struct snapshot *snap)
{
	const __u64 *c = fg->counters;

	if (snap->counter_absent[KVMMMU_LEVEL_REQUESTED_4K]) {
		fprintf(f, "    levels: unavailable (not in this run's figures)\n");
		return;
	}
	fprintf(f,
		"    levels: requested 4k %llu 2m %llu 1g %llu; installed 4k %llu 2m %llu 1g "
		"%llu\n",
		(unsigned long long)c[KVMMMU_LEVEL_REQUESTED_4K],
		(unsigned long long)c[KVMMMU_LEVEL_REQUESTED_2M],
		(unsigned long long)c[KVMMMU_LEVEL_REQUESTED_1G],
		(unsigned long long)c[KVMMMU_LEVEL_INSTALLED_4K],
		(unsigned long long)c[KVMMMU_LEVEL_INSTALLED_2M],
		(unsigned long long)c[KVMMMU_LEVEL_INSTALLED_1G]);
	if (!c[KVMMMU_LEVEL_NOT_HUGE_DIRTY_LOG] && !c[KVMMMU_LEVEL_NOT_HUGE_HOST] &&
	    !c[KVMMMU_LEVEL_NOT_HUGE_NX] && !c[KVMMMU_LEVEL_NOT_HUGE_GMEM])
		return;
	fprintf(f, "    4k, not huge: dirty logging %llu, host mapping %llu, NX huge pages %llu",
		(unsigned long long)c[KVMMMU_LEVEL_NOT_HUGE_DIRTY_LOG],
		(unsigned long long)c[KVMMMU_LEVEL_NOT_HUGE_HOST],
		(unsigned long long)c[KVMMMU_LEVEL_NOT_HUGE_NX]);
	/* a run from before guest_memfd's reason: left out, not a 0 */
	if (!snap->counter_absent[KVMMMU_LEVEL_NOT_HUGE_GMEM])
		fprintf(f, ", guest_memfd %llu", (unsigned long long)c[KVMMMU_LEVEL_NOT_HUGE_GMEM]);
	fputc('\n', f);
}

static void render_memslot(FILE *f, const struct figures *fg)
{
	__u64 faults = fg->counters[KVMMMU_FAULTS];

	fprintf(f, "    memslot lookups: %llu in faults (%.2f per fault), %llu elsewhere\n",
		(unsigned long long)fg->counters[KVMMMU_MEMSLOT_LOOKUPS],
		faults ? (double)fg->counters[KVMMMU_MEMSLOT_LOOKUPS] / (double)faults : 0.0,
		(unsigned long long)fg->counters[KVMMMU_MEMSLOT_OTHER]);
}

static void render_events(FILE *f, const struct figures *fg)
{
	fprintf(f, "    events:");
	for (int i = 0; i < KVMMMU_N_COUNTERS; i++)
		if ((kvmmmu_counter_show[i] & KVMMMU_SHOW_EVENTS) && fg->counters[i])
			fprintf(f, " %s=%llu", kvmmmu_counter_names[i],
				(unsigned long long)fg->counters[i]);
	fputc('\n', f);
}

/*
 * KVM's own view of the same faults, to read next to kvmmmu's: over the same
 * interval, read a moment later (a running VM takes faults in between: the
 * line says how long; only --validate stops the VM for an exact window).
 */
static void render_kvm(FILE *f, const struct vm_stats *v, bool shared, int vcpu, bool interval,
		       double gap)
{
	static const char *const names[] = {"pf_taken",	  "pf_fixed", "pf_spurious",
					    "pf_emulate", "pf_fast",  "pf_guest"};
	bool any = false;

	if (shared) {
		fprintf(f, "    KVM counts: unavailable (its process holds several VMs, whose "
			   "statistics kvmmmu does not yet tell apart)\n");
		return;
	}
	if (v && v->missed) {
		fprintf(f, "    KVM counts: none (the VM exited before kvmmmu could take its "
			   "statistics)\n");
		return;
	}
	if (v && v->stale) {
		fprintf(f, "    KVM counts: unavailable (the VM was gone before kvmmmu's last "
			   "reading: its VMM keeps no stats fd, and debugfs's go with the VM)\n");
		return;
	}
	for (size_t i = 0; v && i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t value;

		int err = interval ? (vcpu < 0 ? vm_stats_sum_since_mark(v, names[i], &value)
					       : vm_stats_get_since_mark(v, vcpu, names[i], &value))
				   : (vcpu < 0 ? vm_stats_sum(v, names[i], &value)
					       : vm_stats_get(v, vcpu, names[i], &value));

		if (err)
			continue;
		fprintf(f, "%s %s %llu", any ? "," : "    KVM counts:", names[i],
			(unsigned long long)value);
		any = true;
	}
	if (any)
		fprintf(f, " (read %.1f ms after kvmmmu's)\n", gap * 1e3);
}

/* The denominator for "share of fault time": whole faults, else walk-to-SPTE. */
static __u64 fault_time_ns(const struct figures *fg, const char **what)
{
	if (fg->hist[KVMMMU_HIST_FAULT].count) {
		*what = "fault time";
		return fg->hist[KVMMMU_HIST_FAULT].sum_ns;
	}
	*what = "walk-to-SPTE time";
	return fg->hist[KVMMMU_HIST_WALK_TO_SPTE].sum_ns;
}

static void render_lock(FILE *f, const struct figures *fg, const struct render_opts *o)
{
	const struct kvmmmu_hist *r = &fg->lock_wait[KVMMMU_LOCK_READ];
	const struct kvmmmu_hist *w = &fg->lock_wait[KVMMMU_LOCK_WRITE];
	const char *what;
	__u64 total = fault_time_ns(fg, &what);

	char a[32], b[32];

	fprintf(f, "    mmu_lock waits in faults: read %llu (%s), write %llu (%s)",
		(unsigned long long)r->count, render_scaled_ns(a, r->sum_ns),
		(unsigned long long)w->count, render_scaled_ns(b, w->sum_ns));
	if (total)
		fprintf(f, "; %.1f%% of %s", pct(r->sum_ns + w->sum_ns, total), what);
	fprintf(f, "\n    mmu_lock waits elsewhere: read %llu (%s), write %llu (%s)\n",
		(unsigned long long)fg->lock_other_waits[KVMMMU_LOCK_READ],
		render_scaled_ns(a, fg->lock_other_wait_ns[KVMMMU_LOCK_READ]),
		(unsigned long long)fg->lock_other_waits[KVMMMU_LOCK_WRITE],
		render_scaled_ns(b, fg->lock_other_wait_ns[KVMMMU_LOCK_WRITE]));
	for (int mode = 0; mode < KVMMMU_LOCK_MODES; mode++)
		if (fg->lock_wait[mode].count)
			render_hist(f, &fg->lock_wait[mode], kvmmmu_lock_hist_names[mode], o);
}

static void render_mmu(FILE *f, const struct figures *fg)
{
	const __u64 *m = fg->mmu;

	fprintf(f,
		"    shadow pages: created %llu, reused %llu, zapped %llu, synced %llu, unsynced "
		"%llu; huge page splits %llu; fast zaps %llu\n",
		(unsigned long long)m[KVMMMU_SHADOW_PAGES_CREATED],
		(unsigned long long)m[KVMMMU_SHADOW_PAGES_REUSED],
		(unsigned long long)m[KVMMMU_SHADOW_PAGES_ZAPPED],
		(unsigned long long)m[KVMMMU_SHADOW_PAGES_SYNCED],
		(unsigned long long)m[KVMMMU_SHADOW_PAGES_UNSYNCED],
		(unsigned long long)m[KVMMMU_HUGE_PAGE_SPLITS],
		(unsigned long long)m[KVMMMU_ZAP_ALL_FAST]);
	if (m[KVMMMU_ROOT_LOADS] || m[KVMMMU_ROOT_UNLOADS])
		fprintf(f, "    MMU roots: loaded %llu (%.3f ms in all), unloaded %llu\n",
			(unsigned long long)m[KVMMMU_ROOT_LOADS], fg->mmu_ns[ROOT_LOAD_NS] / 1e6,
			(unsigned long long)m[KVMMMU_ROOT_UNLOADS]);
	if (!m[KVMMMU_MEMSLOT_UPDATES] && !m[KVMMMU_DIRTY_LOG_GETS] && !m[KVMMMU_DIRTY_LOG_CLEARS])
		return;
	fprintf(f,
		"    dirty logging: on %llu (%.3f ms), off %llu (%.3f ms), get %llu (%.3f ms), "
		"clear %llu (%.3f ms); memslot updates %llu\n",
		(unsigned long long)m[KVMMMU_DIRTY_LOG_ENABLES],
		fg->mmu_ns[DIRTY_LOG_ENABLE_NS] / 1e6,
		(unsigned long long)m[KVMMMU_DIRTY_LOG_DISABLES],
		fg->mmu_ns[DIRTY_LOG_DISABLE_NS] / 1e6,
		(unsigned long long)m[KVMMMU_DIRTY_LOG_GETS], fg->mmu_ns[DIRTY_LOG_GET_NS] / 1e6,
		(unsigned long long)m[KVMMMU_DIRTY_LOG_CLEARS],
		fg->mmu_ns[DIRTY_LOG_CLEAR_NS] / 1e6,
		(unsigned long long)m[KVMMMU_MEMSLOT_UPDATES]);
}

void render_figures(FILE *f, const struct figures *fg, const struct snapshot *snap, bool interval,
		    const struct render_opts *o, const struct vm_stats *kvm, bool kvm_shared,
		    int vcpu)
{
	if (o->show[SECTION_OUTCOMES])
		render_outcomes(f, fg, &snap->ret_pf);
	if (o->show[SECTION_PATHS])
		render_paths(f, fg);
	if (o->show[SECTION_ACCESS])
		render_access(f, fg, snap);
	if (o->show[SECTION_LEVELS])
		render_levels(f, fg, snap);
	if (o->show[SECTION_MEMSLOT] && snap->hist_available[KVMMMU_HIST_MEMSLOT])
		render_memslot(f, fg);
	if (o->show[SECTION_EVENTS])
		render_events(f, fg);
	if (o->show[SECTION_KVM])
		render_kvm(f, kvm, kvm_shared, vcpu, interval, snap->kvm_read_gap);
	if (o->show[SECTION_LOCK] && snap->lock_ok)
		render_lock(f, fg, o);
	if (o->show[SECTION_MMU] && snap->events_ok)
		render_mmu(f, fg);
	if (o->show[SECTION_PHASES])
		render_phases(f, fg, snap, o);
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		if (o->show[SECTION_HIST0 + h] && snap->hist_available[h])
			render_hist(f, &fg->hist[h], kvmmmu_hist_names[h], o);
}
