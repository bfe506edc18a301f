// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "vm_name.h"

static const char *const section_names[SECTION_HIST0] = {
	"outcomes",  "paths",	 "access", "levels",   "memslot", "events",
	"kvm_stats", "mmu_lock", "mmu",	   "timeline", "phases",  "regions"};

const char *section_name(int section)
{
	return section < SECTION_HIST0 ? section_names[section]
				       : kvmmmu_hist_names[section - SECTION_HIST0];
}

/* Sets SHOW's sections named in LIST; -EINVAL with the bad name in *bad. */
static int parse_metrics_into(const char *list, bool show[N_SECTIONS], const char **bad)
{
	static char failed[64];
	char *copy = strdup(list), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		int found = -1;

		if (!strcmp(tok, "all")) {
			for (int s = 0; s < N_SECTIONS; s++)
				show[s] = true;
			continue;
		}
		if (!strcmp(tok, "default")) {
			err = parse_metrics_into(RENDER_DEFAULT_METRICS, show, bad);
			continue;
		}
		for (int s = 0; s < N_SECTIONS; s++)
			if (!strcmp(tok, section_name(s)))
				found = s;
		if (found < 0) {
			snprintf(failed, sizeof(failed), "%s", tok);
			*bad = failed;
			err = -EINVAL;
		} else {
			show[found] = true;
		}
	}
	free(copy);
	return err;
}

int render_parse_metrics(const char *list, bool show[N_SECTIONS], const char **bad)
{
	memset(show, 0, N_SECTIONS * sizeof(show[0]));
	if (!list[0]) {
		*bad = "";
		return -EINVAL;
	}
	return parse_metrics_into(list, show, bad);
}

/* the Probes: block's width: continuation lines are indented by PROBES_INDENT */
#define PROBES_WIDTH 100
#define PROBES_INDENT "        "

/*
 * "Probes: a (tp_btf), b (tp_btf), ..." wrapped at PROBES_WIDTH columns, each
 * further line indented: some twenty tracepoints made one line of 900.
 */
static void print_attached(FILE *f, const struct probe_status *probes, size_t n)
{
	size_t col = strlen("Probes:");
	bool first = true;

	fprintf(f, "Probes:");
	for (size_t i = 0; i < n; i++) {
		const struct probe_status *p = &probes[i];
		char item[160];
		int len;

		if (p->kind == ATTACH_NONE)
			continue;
		len = snprintf(item, sizeof(item), "%s%s%s (%s)", p->group ? p->group : "",
			       p->group ? ":" : "", p->name, attach_kind_str(p->kind));
		if (len < 0)
			continue;
		if (!first && col + 2 + (size_t)len > PROBES_WIDTH) {
			fprintf(f, ",\n%s", PROBES_INDENT);
			col = strlen(PROBES_INDENT);
		} else {
			fputs(first ? " " : ", ", f);
			col += first ? 1 : 2;
		}
		fputs(item, f);
		col += (size_t)len;
		first = false;
	}
	fputc('\n', f);
}

void render_probe_header(FILE *f, const struct snapshot *snap)
{
	print_attached(f, snap->probes, snap->n_probes);
	fprintf(f, "Outcomes from: %s; RET_PF_* from %s\n",
		snap->func_mode	   ? "function return values"
		: snap->done_event ? "the kvm_mmu_page_fault_done tracepoint (kernel-patches/)"
				   : "tracepoints (SPTE requested -> set = fixed, none = spurious)",
		snap->ret_pf.source == RET_PF_FROM_BTF ? "BTF" : "the tracefs format");
	if (snap->sample_every > 1)
		fprintf(f,
			"Latency: sampled, 1 fault in %u timed, at random (histograms and "
			"mmu_lock waits are of timed faults; counts and outcomes of every fault)\n",
			snap->sample_every);
}

/* Probes that could not be had, one line per reason, naming each probe once. */
static void print_unavailable(FILE *f, const struct probe_status *const *p, size_t n)
{
	bool *done = calloc(n ? n : 1, sizeof(*done));

	for (size_t i = 0; done && i < n; i++) {
		const char *sep = "";

		if (done[i])
			continue;
		fprintf(f, "Unavailable:");
		for (size_t k = i; k < n; k++) {
			if (done[k] || strcmp(p[k]->why, p[i]->why))
				continue;
			fprintf(f, "%s %s%s%s", sep, p[k]->group ? p[k]->group : "",
				p[k]->group ? ":" : "", p[k]->name);
			sep = ",";
			done[k] = true;
		}
		fprintf(f, " (%s)\n", p[i]->why);
	}
	free(done);
}

void render_unavailable(FILE *f, const struct snapshot *snap, const struct render_opts *o)
{
	const struct probe_status **missing = calloc(snap->n_probes + 1, sizeof(*missing));
	size_t n = 0;
	const char *sep = "";

	if (!missing)
		return;
	for (size_t i = 0; i < snap->n_probes; i++) {
		const struct probe_status *p = &snap->probes[i];

		/* the collector's tracepoints are all there or it failed; functions may not be */
		if (p->kind == ATTACH_NONE &&
		    (i >= snap->n_collector_probes || (p->wanted && !p->group)))
			missing[n++] = p;
	}
	print_unavailable(f, missing, n);
	free(missing);
	for (int h = 0; h < KVMMMU_N_HISTS; h++) {
		if (!o->show[SECTION_HIST0 + h] || snap->hist_available[h])
			continue;
		fprintf(f, "%s %s", *sep ? "," : "Cannot show:", kvmmmu_hist_names[h]);
		sep = ",";
	}
	if (o->show[SECTION_MEMSLOT] && !snap->hist_available[KVMMMU_HIST_MEMSLOT]) {
		fprintf(f, "%s memslot lookups per fault", *sep ? "," : "Cannot show:");
		sep = ",";
	}
	if (*sep)
		fprintf(f, " (they need the probes above)\n");
}

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
	if (c[KVMMMU_LEVEL_NOT_HUGE_DIRTY_LOG] || c[KVMMMU_LEVEL_NOT_HUGE_HOST] ||
	    c[KVMMMU_LEVEL_NOT_HUGE_NX])
		fprintf(f,
			"    4k, not huge: dirty logging %llu, host mapping %llu, NX huge pages "
			"%llu\n",
			(unsigned long long)c[KVMMMU_LEVEL_NOT_HUGE_DIRTY_LOG],
			(unsigned long long)c[KVMMMU_LEVEL_NOT_HUGE_HOST],
			(unsigned long long)c[KVMMMU_LEVEL_NOT_HUGE_NX]);
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

/* The VM's memslot and dirty-log events, each with the faults since the one before. */
static void render_timeline(FILE *f, const struct snapshot *snap, const struct vm_row *vm)
{
	size_t from = snap->timeline_new;
	double first = 0;
	bool any = false, header = false;

	for (size_t i = 0; i < snap->n_timeline; i++) {
		const struct timeline_event *t = &snap->timeline[i];
		const struct kvmmmu_event *e = &t->ev;

		if ((int)e->tgid != vm->pid || t->vm_index != vm->index)
			continue;
		if (!any) {
			first = t->wall; /* times are from the VM's first event */
			any = true;
		}
		if (i < from)
			continue; /* printed in an earlier report */
		if (!header) {
			fprintf(f, "    timeline%s:\n", from ? " (new events)" : "");
			if (snap->timeline_capped)
				fprintf(f,
					"    (the %llu oldest events of all VMs are not kept: at "
					"most "
					"%d are)\n",
					(unsigned long long)snap->timeline_capped,
					TIMELINE_MAX_EVENTS);
			header = true;
		}
		fprintf(f, "    %+10.6fs  %-16s", t->wall - first, timeline_kind_str(e->kind));
		if (e->kind != KVMMMU_EV_ZAP_ALL_FAST)
			fprintf(f, " slot %u:%u", e->slot >> 16, e->slot & 0xffff);
		if (e->kind <= KVMMMU_EV_MEMSLOT_UPDATE)
			fprintf(f, " [0x%llx, +%llu MiB]", (unsigned long long)e->gpa,
				(unsigned long long)(e->size >> 20));
		fprintf(f, "  took %.3f ms  %llu faults before it\n", e->duration_ns / 1e6,
			(unsigned long long)t->faults_between);
		if (t->storm_known && t->storm_faults)
			render_storm(f, t, snap->regions.size);
	}
}

/* KVM: its counters of the same VM or vCPU (NULL: none); KVM_SHARED: see snapshot_kvm_shared() */
static void render_figures(FILE *f, const struct figures *fg, const struct snapshot *snap,
			   bool interval, const struct render_opts *o, const struct vm_stats *kvm,
			   bool kvm_shared, int vcpu)
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

static bool idle(const struct figures *fg)
{
	for (int i = 0; i < KVMMMU_N_COUNTERS; i++)
		if (fg->counters[i])
			return false;
	return true;
}

/* What was lost, by cause: nothing at all in a healthy run. */
static void render_health(FILE *f, const struct kvmmmu_health *h)
{
	static const struct {
		size_t offset;
		const char *what;
		bool incomplete; /* the figures above miss something */
	} causes[] = {
		{offsetof(struct kvmmmu_health, drops), "events dropped: a per-thread map was full",
		 true},
		{offsetof(struct kvmmmu_health, bad_ret), "RET_PF values beyond the known range",
		 true},
		{offsetof(struct kvmmmu_health, calls_full),
		 "KVM ioctls not timed: too many in flight", true},
		{offsetof(struct kvmmmu_health, slots_full),
		 "memslot changes not told apart: too many memslots", true},
		{offsetof(struct kvmmmu_health, timeline_lost), "timeline events lost: ring full",
		 true},
		{offsetof(struct kvmmmu_health, kprobe_missed),
		 "kprobe hits missed (kretprobe instances exhausted, or a probe inside a probe)",
		 true},
		{offsetof(struct kvmmmu_health, exits_lost),
		 "function exits never seen (a kretprobe missed, or another BPF tool attached or "
		 "detached on the same function during a fault: fexit programs are then skipped)",
		 true},
		{offsetof(struct kvmmmu_health, prog_missed),
		 "BPF program runs skipped by the kernel (a program re-entered on one CPU)", true},
		{offsetof(struct kvmmmu_health, pids_full),
		 "processes the command started not traced: the pid filter was full", true},
		{offsetof(struct kvmmmu_health, news_lost),
		 "thread news lost (ring full; the maps were rescanned)", false},
		{offsetof(struct kvmmmu_health, vm_switches),
		 "memslot or dirty-log calls by a thread on a second VM of its process: its "
		 "per-thread figures (memslot, dirty log) are counted with its first VM",
		 false},
		{offsetof(struct kvmmmu_health, slow_lost),
		 "slow faults not reported (--slower: the ring buffer was full)", false},
		{offsetof(struct kvmmmu_health, regions_full),
		 "faults in no hot region (--metric regions: the region map was full)", true},
	};
	bool incomplete = false;

	for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
		__u64 n = *(const __u64 *)((const char *)h + causes[i].offset);

		if (!n)
			continue;
		fprintf(f, "%sWARNING: %llu %s\n", incomplete ? "" : "\n", (unsigned long long)n,
			causes[i].what);
		incomplete |= causes[i].incomplete;
	}
	if (incomplete)
		fprintf(f, "WARNING: the figures above are incomplete.\n");
}

/*
 * The tracepoint model counts a fault that ends before it requests an SPTE
 * (RET_PF_RETRY after an MMU-notifier race, a guest #PF under shadow paging)
 * from its page-fault exit. A backend that traces no exit (PVM) hides those.
 */
static void render_blind_spot(FILE *f, const struct model *m, const struct snapshot *snap)
{
	__u64 faults = 0, exits = 0;

	if (snap->func_mode || snap->done_event)
		return; /* every fault has an event that ends it */
	for (size_t i = 0; i < m->n_vms; i++) {
		faults += m->vms[i].total.counters[KVMMMU_FAULTS];
		exits += m->vms[i].total.counters[KVMMMU_PF_EXITS];
	}
	if (faults && !exits)
		fprintf(f,
			"\nNote: this KVM backend traces no page-fault exit (kvm:kvm_page_fault), "
			"so faults that end before requesting an SPTE (retried after an "
			"MMU-notifier "
			"race, guest #PFs under shadow paging) are not counted; KVM's pf_taken "
			"counts them.\n");
}

/*
 * A thread that is not a vCPU is a row of its own only when it took faults
 * (its vCPU could not be found): the VMM's other threads (ioctls, memslot
 * and dirty-log changes, their lock waits) are in the VM's figures, and a
 * row of zero faults beside the vCPUs says nothing.
 */
static bool thread_row_worth_showing(const struct figures *fg)
{
	return fg->counters[KVMMMU_FAULTS] != 0;
}

void render_text(FILE *f, const struct snapshot *cur, const struct snapshot *prev,
		 const struct render_opts *o)
{
	struct model delta = {};
	const struct model *m = &cur->m;
	bool interval = prev != NULL;
	size_t shown = 0;

	/* an interval's own figures; the whole run's if the difference cannot be had */
	if (interval && !model_delta(&delta, &cur->m, &prev->m))
		m = &delta;
	for (size_t i = 0; i < m->n_vms; i++) {
		const struct vm_row *vm = &m->vms[i];
		const struct vm_stats *kvm = snapshot_vm_kvm(cur, vm);
		bool kvm_shared = snapshot_kvm_shared(cur, vm);
		char place[48];

		if (o->hide_idle && idle(&vm->total))
			continue;
		shown++;
		snapshot_vm_place(cur, vm, place, sizeof(place));
		if (o->only_vcpu < 0) {
			/* the name users know it by (its -name, ...), escaped: it may hold any byte
			 */
			char *name = vm_name_escape(vm->name ? vm->name : vm->comm);

			fprintf(f, "\n%s (%s)\n", place, name ? name : vm->comm);
			free(name);
			render_figures(f, &vm->total, cur, interval, o, kvm, kvm_shared, -1);
			if (o->show[SECTION_REGIONS])
				render_regions(f, cur, vm);
			if (o->show[SECTION_TIMELINE])
				render_timeline(f, cur, vm);
		}
		if (!o->per_vcpu && o->only_vcpu < 0)
			continue;
		for (size_t r = 0; r < vm->n_rows; r++) {
			const struct vcpu_row *row = &vm->rows[r];

			if (o->only_vcpu >= 0 && row->vcpu != o->only_vcpu)
				continue;
			if (row->vcpu < 0 && !thread_row_worth_showing(&row->f))
				continue;
			if (row->vcpu >= 0)
				fprintf(f, "\n%s vCPU %d (%s)\n", place, row->vcpu, row->comm);
			else
				fprintf(f, "\n%s thread %d (%s, vCPU unknown)\n", place, row->tid,
					row->comm);
			render_figures(f, &row->f, cur, interval, o, row->vcpu >= 0 ? kvm : NULL,
				       row->vcpu >= 0 && kvm_shared, row->vcpu);
		}
	}
	if (!shown)
		fprintf(f, "No KVM MMU faults seen.\n");
	render_blind_spot(f, m, cur);
	render_health(f, &m->health);
	model_free(&delta);
}
