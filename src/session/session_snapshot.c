// SPDX-License-Identifier: GPL-2.0
/*
 * A session's snapshots (session.h): its figures, read by session_read(),
 * with copies of everything a renderer needs, so that nothing live is
 * reached from a snapshot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "sysinfo.h"

/* The VM names the model points at, copied: a snapshot outlives the VMs it shows. */
static int own_names(struct snapshot *snap)
{
	snap->names = calloc(snap->m.n_vms + 1, sizeof(*snap->names));
	if (!snap->names)
		return -ENOMEM;
	for (size_t i = 0; i < snap->m.n_vms; i++) {
		struct vm_row *vm = &snap->m.vms[i];

		if (!vm->name)
			continue;
		snap->names[snap->n_names] = strdup(vm->name);
		if (!snap->names[snap->n_names])
			return -ENOMEM;
		vm->name = snap->names[snap->n_names++];
	}
	return 0;
}

/* How the figures are had: probes, RET_PF_* names, what can be shown. */
static int fill_facts(const struct session *s, struct snapshot *snap)
{
	const struct collector *c = &s->c;
	const struct faults_source *f = &c->faults;

	snap->func_mode = f->func_mode;
	snap->done_event = f->done_event;
	snap->ret_pf.source = f->ret_pf.source;
	for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++)
		if (f->ret_pf.name[r] && !(snap->ret_pf.name[r] = strdup(f->ret_pf.name[r])))
			return -ENOMEM;
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		snap->hist_available[h] = collector_hist_available(c, h, &snap->hist_why[h]);
	/* lookups not probed were not counted: no 0 for them in the CSV */
	snap->counter_absent[KVMMMU_MEMSLOT_LOOKUPS] = snap->counter_absent[KVMMMU_MEMSLOT_OTHER] =
		!snap->hist_available[KVMMMU_HIST_MEMSLOT];
	/* ... nor events whose tracepoints are off */
	for (int k = 0; k < KVMMMU_N_COUNTERS; k++)
		if (!faults_source_counted(f, k))
			snap->counter_absent[k] = true;
	snap->probes = collector_probes(c, &snap->n_probes, &snap->n_collector_probes);
	if (!snap->probes)
		return -ENOMEM;
	snap->lock_ok = c->lock.ok;
	snap->events_ok = c->events.ok;
	snap->timeline_capped = c->events.timeline.capped;
	snap->sample_every = s->opts.sample_every > 1 ? s->opts.sample_every : 1;
	snap->slow_stacks = s->opts.slower_ns && s->opts.slow_stacks;
	return 0;
}

int session_facts(const struct session *s, struct snapshot *snap)
{
	int err;

	memset(snap, 0, sizeof(*snap));
	snap->wall = sysinfo_now();
	err = fill_facts(s, snap);
	if (err)
		snapshot_free(snap);
	return err;
}

int session_snapshot(struct session *s, struct snapshot *snap, bool final)
{
	const struct timeline *x = &s->c.events.timeline;
	int err;

	memset(snap, 0, sizeof(*snap));
	err = session_read(s, &snap->m, final);
	snap->wall = sysinfo_now();
	snap->traced_ns = (__u64)((sysinfo_monotonic() - s->armed_at) * 1e9);
	snap->kvm_read_gap = s->kvm_read_gap;
	if (!err)
		err = own_names(snap);
	if (!err)
		err = fill_facts(s, snap);
	if (!err && s->kvm.n) {
		snap->kvm = calloc(s->kvm.n, sizeof(*snap->kvm));
		err = snap->kvm ? 0 : -ENOMEM;
		for (size_t i = 0; !err && i < s->kvm.n; i++, snap->n_kvm++)
			err = vm_stats_copy(&snap->kvm[i], &s->kvm.v[i]);
	}
	if (!err)
		err = faults_source_read_regions(&s->c.faults, &snap->regions);
	if (!err)
		faults_source_take_storms(&s->c.faults, &s->c.events.timeline, s->timeline_seen);
	if (!err && x->n) {
		snap->timeline = malloc(x->n * sizeof(*snap->timeline));
		err = snap->timeline ? 0 : -ENOMEM;
		if (!err) {
			memcpy(snap->timeline, x->events, x->n * sizeof(*snap->timeline));
			snap->n_timeline = x->n;
		}
	}
	/* each timeline event is new in one snapshot only */
	snap->timeline_new =
		s->timeline_seen < snap->n_timeline ? s->timeline_seen : snap->n_timeline;
	if (!err)
		s->timeline_seen = snap->n_timeline;
	else
		snapshot_free(snap);
	return err;
}
