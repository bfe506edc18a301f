// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive.h"
#include "hash.h"
#include "array.h"
#include "stats.h"
#include "vm_keys.h"

static struct scalar *add(struct run *r, const char *vm, int vcpu, const char *metric, double v)
{
	struct scalar *s = array_grow(r->s, r->n + 1, &r->cap, sizeof(*r->s));

	if (!s)
		return NULL;
	r->s = s;
	s = &r->s[r->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->vm, sizeof(s->vm), "%s", vm);
	s->vcpu = vcpu;
	snprintf(s->metric, sizeof(s->metric), "%s", metric);
	s->value = v;
	return s;
}

static double pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* --metric phases: each phase's share of the faults' time ("phase_pfn_ns % of fault time"). */
static void phase_shares(struct run *r, const char *vm, int vcpu, const struct snapshot *sn,
			 const struct figures *f)
{
	const struct kvmmmu_hist *whole = &f->hist[figures_phase_whole(f)];
	char metric[64];

	for (int p = 0; p < KVMMMU_N_PHASES && whole->sum_ns; p++) {
		int h = kvmmmu_phase_hist[p];

		if (!sn->hist_available[h])
			continue;
		snprintf(metric, sizeof(metric), "%s %% of fault time", kvmmmu_hist_names[h]);
		add(r, vm, vcpu, metric, pct(f->hist[h].sum_ns, whole->sum_ns));
	}
}

/* H's figures; its max only where the file had it (MAX_KNOWN): never a 0 for it */
static void add_hist(struct run *r, const char *vm, int vcpu, const char *name,
		     const struct kvmmmu_hist *h, bool max_known)
{
	static const struct {
		const char *suffix;
		double q;
	} qs[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}};
	char metric[64];
	struct scalar *s;

	if (!h->count)
		return;
	snprintf(metric, sizeof(metric), "%s mean", name);
	s = add(r, vm, vcpu, metric, (double)h->sum_ns / (double)h->count);
	if (s)
		s->hist = h;
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		snprintf(metric, sizeof(metric), "%s %s", name, qs[i].suffix);
		s = add(r, vm, vcpu, metric, stats_hist_quantile(h, qs[i].q));
		if (s) {
			s->hist = h;
			s->key = qs[i].q == 0.99;
		}
	}
	if (!max_known)
		return;
	snprintf(metric, sizeof(metric), "%s max", name);
	s = add(r, vm, vcpu, metric, (double)h->max_ns);
	if (s)
		s->hist = h;
}

static void derive_figures(struct run *r, const char *vm, int vcpu, const struct figures *f)
{
	const struct snapshot *sn = &r->snap;
	__u64 faults = f->counters[KVMMMU_FAULTS];
	static const int paths[] = {KVMMMU_PATH_FAST, KVMMMU_PATH_TDP_MMU, KVMMMU_PATH_SHADOW,
				    KVMMMU_PATH_DIRECT};
	/* a file without faults rows did not count them: no count, rate or share, never 0 */
	bool counted = !sn->counter_absent[KVMMMU_FAULTS];
	struct scalar *s;
	char metric[64];

	if (counted) {
		s = add(r, vm, vcpu, "faults", (double)faults);
		if (s)
			s->key = true;
	}
	/* over the traced window (CSV v2 from kvmmmu-hist and kvmmmu-top: traced_ns) */
	if (counted && sn->traced_ns) {
		s = add(r, vm, vcpu, "faults/s", (double)faults / ((double)sn->traced_ns / 1e9));
		if (s)
			s->key = vcpu < 0;
	}
	for (int k = 0; k < KVMMMU_RET_PF_SLOTS && counted; k++) {
		if (!sn->ret_pf.name[k])
			continue;
		snprintf(metric, sizeof(metric), "ret_pf_%s %%", sn->ret_pf.name[k]);
		add(r, vm, vcpu, metric, pct(f->ret_pf[k], faults));
	}
	for (size_t i = 0; i < 4 && counted; i++) {
		if (sn->counter_absent[paths[i]])
			continue;
		snprintf(metric, sizeof(metric), "%s %%", kvmmmu_counter_names[paths[i]]);
		add(r, vm, vcpu, metric, pct(f->counters[paths[i]], faults));
	}
	/*
	 * Access kinds, installed levels and why 4 KiB, as shares of the faults
	 * (a run from before them has none): the catalogue's runs of them.
	 */
	static const int shares[][2] = {
		{KVMMMU_ACCESS_READ, KVMMMU_ACCESS_PRESENT},
		{KVMMMU_LEVEL_INSTALLED_4K, KVMMMU_LEVEL_INSTALLED_1G},
		{KVMMMU_LEVEL_NOT_HUGE_DIRTY_LOG, KVMMMU_LEVEL_NOT_HUGE_GMEM}};

	for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]) && counted; i++)
		for (int k = shares[i][0]; k <= shares[i][1] && !sn->counter_absent[k]; k++) {
			snprintf(metric, sizeof(metric), "%s %%", kvmmmu_counter_names[k]);
			add(r, vm, vcpu, metric, pct(f->counters[k], faults));
		}
	if (vcpu >= 0)
		return; /* per vCPU: counts and shares; the rest is the VM's */
	if (sn->hist_available[KVMMMU_HIST_MEMSLOT] && faults)
		add(r, vm, vcpu, "memslot lookups per fault",
		    (double)f->counters[KVMMMU_MEMSLOT_LOOKUPS] / (double)faults);
	for (int k = 0; k < KVMMMU_N_COUNTERS && faults; k++) {
		if (!(kvmmmu_counter_show[k] & KVMMMU_SHOW_DIFF) || sn->counter_absent[k])
			continue;
		snprintf(metric, sizeof(metric), "%s per fault", kvmmmu_counter_names[k]);
		add(r, vm, vcpu, metric, (double)f->counters[k] / (double)faults);
	}
	if (sn->lock_ok) {
		const struct kvmmmu_hist *ft = sn->hist_available[KVMMMU_HIST_FAULT]
						       ? &f->hist[KVMMMU_HIST_FAULT]
						       : &f->hist[KVMMMU_HIST_WALK_TO_SPTE];

		add(r, vm, vcpu, "mmu_lock read waits in faults",
		    (double)f->lock_wait[KVMMMU_LOCK_READ].count);
		add(r, vm, vcpu, "mmu_lock write waits in faults",
		    (double)f->lock_wait[KVMMMU_LOCK_WRITE].count);
		if (ft->sum_ns)
			add(r, vm, vcpu, "mmu_lock wait % of fault time",
			    pct(f->lock_wait[KVMMMU_LOCK_READ].sum_ns +
					f->lock_wait[KVMMMU_LOCK_WRITE].sum_ns,
				ft->sum_ns));
	}
	phase_shares(r, vm, vcpu, sn, f);
	if (sn->events_ok) {
		add(r, vm, vcpu, "shadow pages created",
		    (double)f->mmu[KVMMMU_SHADOW_PAGES_CREATED]);
		add(r, vm, vcpu, "shadow pages zapped", (double)f->mmu[KVMMMU_SHADOW_PAGES_ZAPPED]);
		for (int i = 0; i < N_MMU_TIMES; i++)
			if (f->mmu_ns[i])
				add(r, vm, vcpu, mmu_time_names[i], (double)f->mmu_ns[i]);
	}
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		if (sn->hist_available[h])
			add_hist(r, vm, vcpu, kvmmmu_hist_names[h], &f->hist[h],
				 !sn->hist_max_absent[h]);
}

/* kvmmmu-load's own phase figures (source "load"): times in seconds, per-phase fault counts. */
static void derive_load(struct run *r, const struct vm_keys *keys)
{
	for (size_t i = 0; i < r->table.n_rows; i++) {
		const struct csv_record *c = &r->table.rows[i];
		const char *key = vm_keys_find(keys, c->pid, c->vm_index);
		char metric[64];

		if (strcmp(c->source, "load") || c->vcpu != CSV_NO_VCPU || !key)
			continue;
		snprintf(metric, sizeof(metric), "load %s", c->metric);
		add(r, key, -1, metric, c->value);
	}
}

static size_t key_hash(const char *vm, int vcpu, const char *metric)
{
	return hash_str(hash_u64(hash_str(HASH_INIT, vm), (unsigned int)vcpu), metric);
}

static bool same_key(const struct scalar *s, const char *vm, int vcpu, const char *metric)
{
	return s->vcpu == vcpu && !strcmp(s->metric, metric) && !strcmp(s->vm, vm);
}

/* The index over R's scalars: a table at most half full, a power of two. */
static int build_index(struct run *r)
{
	size_t cap = 16;

	while (cap < 2 * r->n)
		cap *= 2;
	r->index = calloc(cap, sizeof(*r->index));
	if (!r->index)
		return -ENOMEM;
	r->index_cap = cap;
	for (size_t i = 0; i < r->n; i++) {
		const struct scalar *s = &r->s[i];
		size_t at = key_hash(s->vm, s->vcpu, s->metric) & (cap - 1);

		while (r->index[at] &&
		       !same_key(&r->s[r->index[at] - 1], s->vm, s->vcpu, s->metric))
			at = (at + 1) & (cap - 1);
		if (!r->index[at]) /* the first of a key wins, as a linear search did */
			r->index[at] = i + 1;
	}
	return 0;
}

int run_load(struct run *r, const char *path, char *err, size_t err_len)
{
	struct vm_keys keys;
	char why[256];
	int e;

	memset(r, 0, sizeof(*r));
	r->path = strdup(path);
	if (!r->path) {
		snprintf(err, err_len, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	e = csv_read_file(path, &r->table, why, sizeof(why));
	if (e) {
		snprintf(err, err_len, "%s: %s", path, e == -EINVAL ? why : strerror(-e));
		return e;
	}
	e = snapshot_from_csv(&r->table, &r->snap, why, sizeof(why));
	if (e) {
		snprintf(err, err_len, "%s: %s", path, e == -EINVAL ? why : strerror(-e));
		return e;
	}
	e = vm_keys_build(&keys, &r->snap, &r->table);
	for (size_t i = 0; i < r->snap.m.n_vms && !e; i++) {
		const struct vm_row *vm = &r->snap.m.vms[i];
		const char *name = vm_keys_find(&keys, vm->pid, vm->index);

		derive_figures(r, name, -1, &vm->total);
		for (size_t k = 0; k < vm->n_rows; k++)
			if (vm->rows[k].vcpu >= 0)
				derive_figures(r, name, vm->rows[k].vcpu, &vm->rows[k].f);
	}
	if (!e)
		derive_load(r, &keys);
	vm_keys_free(&keys);
	if (!e)
		e = build_index(r);
	if (e)
		snprintf(err, err_len, "%s: %s", path, strerror(-e));
	return e;
}

void run_free(struct run *r)
{
	free(r->path);
	free(r->s);
	free(r->index);
	snapshot_free(&r->snap);
	csv_table_free(&r->table);
	memset(r, 0, sizeof(*r));
}

const struct scalar *run_find(const struct run *r, const char *vm, int vcpu, const char *metric)
{
	size_t at;

	if (!r->index) { /* not indexed yet */
		for (size_t i = 0; i < r->n; i++)
			if (same_key(&r->s[i], vm, vcpu, metric))
				return &r->s[i];
		return NULL;
	}
	for (at = key_hash(vm, vcpu, metric) & (r->index_cap - 1); r->index[at];
	     at = (at + 1) & (r->index_cap - 1))
		if (same_key(&r->s[r->index[at] - 1], vm, vcpu, metric))
			return &r->s[r->index[at] - 1];
	return NULL;
}
