// SPDX-License-Identifier: GPL-2.0
/*
 * The text report of a snapshot (kvmmmu-hist): each VM, then its vCPUs and
 * threads, with their sections (render_text_figures.c), the VM's regions
 * and timeline; then what the figures cannot see and what was lost.
 */
#include <stddef.h>
#include <stdlib.h>

#include "render_text_internal.h"
#include "vm_name.h"

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
		 "BPF program runs skipped by the kernel (a program re-entered on one CPU: where "
		 "BPF runs preemptibly, as on 7.x, another thread ran it there while it was "
		 "preempted)",
		 true},
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
