// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>

#include "render.h"

struct csv_ctx {
	struct csv_writer *w;
	struct csv_row row;
	int err;
};

static void put(struct csv_ctx *x, const char *metric, const char *le, __u64 value)
{
	x->row.metric = metric;
	x->row.le = le;
	x->row.kind = CSV_U64;
	x->row.u64 = value;
	if (!x->err)
		x->err = csv_write_row(x->w, &x->row);
}

static void put_hist(struct csv_ctx *x, const char *name, const struct kvmmmu_hist *h)
{
	static const struct {
		const char *suffix;
		double p;
	} pcts[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}};
	char metric[64], le[32];
	__u64 cumulative = 0;
	int last = -1;

	for (int b = 0; b < KVMMMU_HIST_BUCKETS; b++)
		if (h->slots[b])
			last = b;
	/* Prometheus-style cumulative buckets, up to the last non-empty one. */
	for (int b = 0; b <= last && b < KVMMMU_HIST_BUCKETS - 1; b++) {
		cumulative += h->slots[b];
		snprintf(le, sizeof(le), "%llu", (unsigned long long)kvmmmu_hist_slot_high(b));
		put(x, name, le, cumulative);
	}
	put(x, name, "+Inf", h->count);
	snprintf(metric, sizeof(metric), "%s_count", name);
	put(x, metric, NULL, h->count);
	snprintf(metric, sizeof(metric), "%s_sum", name);
	put(x, metric, NULL, h->sum_ns);
	snprintf(metric, sizeof(metric), "%s_max", name);
	put(x, metric, NULL, h->max_ns);
	for (size_t i = 0; i < 4; i++) {
		snprintf(metric, sizeof(metric), "%s_%s", name, pcts[i].suffix);
		put(x, metric, NULL, hist_percentile(h, pcts[i].p));
	}
}

static void put_figures(struct csv_ctx *x, const struct figures *f, const struct snapshot *snap)
{
	char metric[64];

	for (int i = 0; i < KVMMMU_N_COUNTERS; i++)
		if (!snap->counter_absent[i]) /* never a 0 for what was not counted */
			put(x, kvmmmu_counter_names[i], NULL, f->counters[i]);
	for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++) {
		if (!snap->ret_pf.name[r])
			continue;
		snprintf(metric, sizeof(metric), "ret_pf_%s", snap->ret_pf.name[r]);
		put(x, metric, NULL, f->ret_pf[r]);
	}
	/* the path x outcome table: the cells that have faults */
	for (int p = 0; p < KVMMMU_N_FAULT_PATHS; p++)
		for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++) {
			if (!snap->ret_pf.name[r] || !f->outcomes[p][r])
				continue;
			snprintf(metric, sizeof(metric), "outcome_%s_%s",
				 kvmmmu_fault_path_names[p], snap->ret_pf.name[r]);
			put(x, metric, NULL, f->outcomes[p][r]);
		}
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		if (snap->hist_available[h])
			put_hist(x, kvmmmu_hist_names[h], &f->hist[h]);
	if (snap->lock_ok) {
		static const char *const other[KVMMMU_LOCK_MODES][2] = {
			{"mmu_lock_read_waits_outside_faults",
			 "mmu_lock_read_wait_ns_outside_faults"},
			{"mmu_lock_write_waits_outside_faults",
			 "mmu_lock_write_wait_ns_outside_faults"},
		};

		for (int mode = 0; mode < KVMMMU_LOCK_MODES; mode++) {
			put_hist(x, kvmmmu_lock_hist_names[mode], &f->lock_wait[mode]);
			put(x, other[mode][0], NULL, f->lock_other_waits[mode]);
			put(x, other[mode][1], NULL, f->lock_other_wait_ns[mode]);
		}
	}
	if (snap->events_ok) {
		for (int i = 0; i < KVMMMU_N_MMU_COUNTERS; i++)
			put(x, kvmmmu_mmu_counter_names[i], NULL, f->mmu[i]);
		for (int i = 0; i < N_MMU_TIMES; i++)
			put(x, mmu_time_names[i], NULL, f->mmu_ns[i]);
	}
}

/*
 * --metric regions: where an event's faults before it were, in all regions
 * (event_KIND_faults_before_regions) and in the most faulted ones, each with
 * its first GPA in le, as region_faults_slot_N writes it.
 */
static void put_storm(struct csv_ctx *x, const struct timeline_event *t)
{
	const char *kind = timeline_kind_str(t->ev.kind);
	char metric[80], base[24];

	snprintf(metric, sizeof(metric), "event_%s_faults_before_regions", kind);
	put(x, metric, NULL, t->storm_faults);
	for (unsigned int i = 0; i < t->n_storm; i++) {
		const struct storm_region *r = &t->storm[i];

		if (r->slot < 0)
			snprintf(metric, sizeof(metric), "event_%s_faults_before_fast_path", kind);
		else
			snprintf(metric, sizeof(metric), "event_%s_faults_before_slot_%d", kind,
				 r->slot);
		snprintf(base, sizeof(base), "%llu", (unsigned long long)r->base);
		put(x, metric, base, r->faults);
	}
}

/* The snapshot's new timeline events: event_KIND_ns (time taken) and event_KIND_faults_before. */
static void put_timeline(struct csv_ctx *x, const struct snapshot *snap)
{
	const struct model *m = &snap->m;

	for (size_t i = snap->timeline_new; i < snap->n_timeline; i++) {
		const struct timeline_event *t = &snap->timeline[i];
		const struct vm_row *vm = model_find_vm(m, (int)t->ev.tgid, t->vm_index);

		char metric[64];

		if (!vm)
			continue; /* a VM nobody asked for */
		x->row.ts = t->wall;
		x->row.pid = (int)t->ev.tgid;
		x->row.comm = vm->comm;
		x->row.vm = vm->name ? vm->name : vm->comm;
		x->row.vm_index = vm->index;
		x->row.vcpu = CSV_NO_VCPU;
		snprintf(metric, sizeof(metric), "event_%s_ns", timeline_kind_str(t->ev.kind));
		put(x, metric, NULL, t->ev.duration_ns);
		snprintf(metric, sizeof(metric), "event_%s_faults_before",
			 timeline_kind_str(t->ev.kind));
		put(x, metric, NULL, t->faults_between);
		if (t->storm_known)
			put_storm(x, t);
	}
}

/* Every KVM statistic of one vCPU (or the VM, vcpu < 0), since tracing started. */
static void put_kvm(struct csv_ctx *x, const struct vm_stats *v, int vcpu)
{
	const struct kvm_stats *s = NULL;

	if (vcpu < 0 && v->have_vm)
		s = &v->vm;
	for (size_t i = 0; vcpu >= 0 && i < v->n_vcpus; i++)
		if (v->vcpus[i].vcpu == vcpu)
			s = &v->vcpus[i].stats;
	x->row.source = "kvm_stats";
	for (size_t i = 0; s && i < s->n_desc; i++) {
		uint64_t value;

		/* histograms stay with kvmmmu-load's CSV; here the scalars sit beside bpf rows */
		if (s->desc[i].size == 1 && !vm_stats_get(v, vcpu, s->desc[i].name, &value))
			put(x, s->desc[i].name, NULL, value);
	}
	x->row.source = "bpf";
}

int render_csv(struct csv_writer *w, const struct snapshot *snap)
{
	struct csv_ctx x = {.w = w, .row = {.ts = snap->wall, .source = "bpf"}};
	const struct model *m = &snap->m;

	/* every figure the snapshot has, whatever --metric shows: CSV is for machines */
	for (size_t i = 0; i < m->n_vms; i++) {
		const struct vm_row *vm = &m->vms[i];
		/* KVM's rows only where they are this VM's alone (snapshot_vm_kvm) */
		const struct vm_stats *kvm = snapshot_vm_kvm(snap, vm);

		x.row.pid = vm->pid;
		x.row.vm_index = vm->index;
		x.row.comm = vm->comm;
		/* the key runs are joined on (kvmmmu-diff): pids differ between runs, names do not
		 */
		x.row.vm = vm->name ? vm->name : vm->comm;
		x.row.vcpu = CSV_NO_VCPU;
		put_figures(&x, &vm->total, snap);
		if (!x.err)
			x.err = render_csv_regions(w, snap, &x.row, vm);
		if (kvm)
			put_kvm(&x, kvm, -1);
		for (size_t r = 0; r < vm->n_rows; r++) {
			const struct vcpu_row *row = &vm->rows[r];
			char comm[48];

			if (row->vcpu < 0) {
				/* no vCPU: a thread of its own, named with its tid */
				snprintf(comm, sizeof(comm), "%s [tid %d]", row->comm, row->tid);
				x.row.comm = comm;
				x.row.vcpu = CSV_NO_VCPU;
			} else {
				x.row.comm = row->comm;
				x.row.vcpu = row->vcpu;
			}
			put_figures(&x, &row->f, snap);
			if (kvm && row->vcpu >= 0)
				put_kvm(&x, kvm, row->vcpu);
		}
	}
	put_timeline(&x, snap);
	x.row.ts = snap->wall;
	x.row.pid = 0;
	x.row.comm = "kvmmmu";
	x.row.vm = NULL;
	x.row.vm_index = 0;
	x.row.vcpu = CSV_NO_VCPU;
	for (size_t i = 0; i < N_HEALTH_FIELDS; i++)
		put(&x, health_fields[i].metric, NULL, health_value(&m->health, &health_fields[i]));
	put(&x, "latency_sample_every", NULL, snap->sample_every > 1 ? snap->sample_every : 1);
	if (snap->traced_ns)
		put(&x, "traced_ns", NULL, snap->traced_ns);
	return x.err;
}
