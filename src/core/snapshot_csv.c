// SPDX-License-Identifier: GPL-2.0
/*
 * A snapshot from a kvmmmu CSV file (v1, v2 or v3, of any command): the last
 * value of every figure, as the renderers and the compare command use it.
 * The CSV rows are cumulative, so the last report of a run holds the run.
 */
#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "snapshot.h"
#include "array.h"

/* Names the VM rows point at: kept with the snapshot's model. */
struct loader {
	struct snapshot *snap;
	char **names;
	size_t n_names, cap_names;
	void *pids; /* tsearch() tree of struct pid_index: each VM found in O(log n) */
	/* the last bucket row read: a histogram's cumulative buckets never decrease */
	const struct kvmmmu_hist *last_hist;
	__u32 last_bucket;
	__u64 last_count;
	/* the last +Inf row: kvmmmu writes it and _count from one value */
	const struct kvmmmu_hist *inf_hist;
	__u64 inf_count;
	bool counter_seen[KVMMMU_N_COUNTERS];
	bool hist_max_seen[KVMMMU_N_HISTS];
};

struct pid_index {
	int pid, index; /* the VM: process and which of its VMs */
	size_t vm;	/* its row in the model (rows move as the array grows) */
};

static int cmp_pid_index(const void *a, const void *b)
{
	const struct pid_index *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The row of VM INDEX of PID, added if new: a search tree, not a walk over thousands of VMs. */
static struct vm_row *loader_vm(struct loader *l, int pid, int index)
{
	struct model *m = &l->snap->m;
	struct pid_index key = {.pid = pid, .index = index}, **found, *node;

	/* rows come by VM */
	if (m->n_vms && m->vms[m->n_vms - 1].pid == pid && m->vms[m->n_vms - 1].index == index)
		return &m->vms[m->n_vms - 1];
	found = tfind(&key, &l->pids, cmp_pid_index);
	if (found)
		return &m->vms[(*found)->vm];
	node = malloc(sizeof(*node));
	if (!node)
		return NULL;
	*node = (struct pid_index){.pid = pid, .index = index, .vm = m->n_vms};
	if (!tsearch(node, &l->pids, cmp_pid_index)) {
		free(node);
		return NULL;
	}
	return model_vm_add(m, pid, index);
}

/* Each VM keeps its own copy of its name: one a VM, so no search for a shared one. */
static const char *keep_name(struct loader *l, const char *name)
{
	char **n;

	n = array_grow(l->names, l->n_names + 1, &l->cap_names, sizeof(*n));
	if (!n)
		return NULL;
	l->names = n;
	n[l->n_names] = strdup(name);
	return n[l->n_names] ? n[l->n_names++] : NULL;
}

/* The slot of RET_PF_NAME: the one the CSV had first named so, else the next free one. */
static int ret_pf_slot(struct snapshot *s, const char *name)
{
	int free_slot = -1;

	for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++) {
		if (s->ret_pf.name[r] && !strcmp(s->ret_pf.name[r], name))
			return r;
		if (!s->ret_pf.name[r] && free_slot < 0)
			free_slot = r;
	}
	if (free_slot >= 0 && !(s->ret_pf.name[free_slot] = strdup(name)))
		return -1;
	return free_slot;
}

static int index_of(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return i;
	return -1;
}

/*
 * Histogram rows NAME (cumulative buckets by le), NAME_count, _sum, _max; 0
 * if not one, 1 if one, -EINVAL for a bucket below the one before it (its
 * report's rows come in le order: a drop is no histogram kvmmmu wrote),
 * -EDOM for an le that is no bound (digits or +Inf), -ERANGE for a _count
 * that is not its +Inf row's (kvmmmu writes both from one value).
 * *MAX_SEEN (unless NULL) is set by a _max row: without one the max is not
 * known, which its 0 must not claim.
 */
static int set_hist(struct loader *l, struct kvmmmu_hist *h, const char *base,
		    const struct csv_record *r, bool *max_seen)
{
	size_t n = strlen(base);
	const char *suffix = r->metric + n;

	if (strncmp(r->metric, base, n))
		return 0;
	if (!*suffix && r->le) {
		if (!strcmp(r->le, "+Inf")) {
			l->inf_hist = h;
			l->inf_count = r->u64;
			return 1; /* the same as _count */
		}
		if (!*r->le || r->le[strspn(r->le, "0123456789")])
			return -EDOM; /* strtoull() would take "-1" as 2^64 - 1 */
		for (__u32 b = 0; b < KVMMMU_HIST_BUCKETS - 1; b++)
			if (kvmmmu_hist_slot_high(b) == strtoull(r->le, NULL, 10)) {
				if (l->last_hist == h && b > l->last_bucket &&
				    r->u64 < l->last_count)
					return -EINVAL;
				l->last_hist = h;
				l->last_bucket = b;
				l->last_count = r->u64;
				h->slots[b] = r->u64; /* cumulative for now: see finish_hist() */
				return 1;
			}
		return 1; /* a bound this build does not have: ignored */
	}
	if (!strcmp(suffix, "_count")) {
		if (l->inf_hist == h && l->inf_count != r->u64)
			return -ERANGE;
		h->count = r->u64;
	} else if (!strcmp(suffix, "_sum"))
		h->sum_ns = r->u64;
	else if (!strcmp(suffix, "_max")) {
		h->max_ns = r->u64;
		if (max_seen)
			*max_seen = true;
	} else if (strncmp(suffix, "_p", 2)) /* percentiles: derived, not kept */
		return 0;
	return 1;
}

/* Cumulative bucket counts to per-bucket ones; what is above the last bound is in the top one. */
static void finish_hist(struct kvmmmu_hist *h)
{
	__u64 below = 0, last = 0;

	for (__u32 b = 0; b < KVMMMU_HIST_BUCKETS - 1; b++) {
		if (h->slots[b] < below) /* no row for this bound: nothing in it */
			h->slots[b] = below;
		last = h->slots[b];
		h->slots[b] -= below;
		below = last;
	}
	h->slots[KVMMMU_HIST_BUCKETS - 1] = h->count > below ? h->count - below : 0;
}

/* -EINVAL for a histogram's bucket that drops (set_hist()), else 0. */
static int set_figure(struct loader *l, struct figures *f, const struct csv_record *r)
{
	struct snapshot *s = l->snap;
	const char *ret_name;
	int i, got;

	if ((i = index_of(kvmmmu_counter_names, KVMMMU_N_COUNTERS, r->metric)) >= 0) {
		f->counters[i] = r->u64;
		l->counter_seen[i] = true;
		return 0;
	}
	if ((i = outcome_metric_path(r->metric, &ret_name)) >= 0) {
		int slot = ret_pf_slot(s, ret_name);

		if (slot >= 0)
			f->outcomes[i][slot] = r->u64;
		return 0;
	}
	if (!strncmp(r->metric, "ret_pf_", 7)) {
		i = ret_pf_slot(s, r->metric + 7);
		if (i >= 0)
			f->ret_pf[i] = r->u64;
		return 0;
	}
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		if ((got = set_hist(l, &f->hist[h], kvmmmu_hist_names[h], r,
				    &l->hist_max_seen[h]))) {
			s->hist_available[h] = true;
			return got < 0 ? got : 0;
		}
	for (int m = 0; m < KVMMMU_LOCK_MODES; m++)
		if ((got = set_hist(l, &f->lock_wait[m], kvmmmu_lock_hist_names[m], r, NULL))) {
			s->lock_ok = true;
			return got < 0 ? got : 0;
		}
	for (int m = 0; m < KVMMMU_LOCK_MODES; m++) {
		static const char *const waits[] = {"mmu_lock_read_waits_outside_faults",
						    "mmu_lock_write_waits_outside_faults"};
		static const char *const ns[] = {"mmu_lock_read_wait_ns_outside_faults",
						 "mmu_lock_write_wait_ns_outside_faults"};

		if (!strcmp(r->metric, waits[m]))
			f->lock_other_waits[m] = r->u64;
		else if (!strcmp(r->metric, ns[m]))
			f->lock_other_wait_ns[m] = r->u64;
	}
	if ((i = index_of(kvmmmu_mmu_counter_names, KVMMMU_N_MMU_COUNTERS, r->metric)) >= 0) {
		f->mmu[i] = r->u64;
		s->events_ok = true;
	} else if ((i = index_of(mmu_time_names, N_MMU_TIMES, r->metric)) >= 0) {
		f->mmu_ns[i] = r->u64;
	}
	return 0;
}

static void set_health(struct snapshot *s, const struct csv_record *r)
{

	if (!strcmp(r->metric, "latency_sample_every")) {
		s->sample_every = (unsigned int)r->u64;
		return;
	}
	if (!strcmp(r->metric, "traced_ns")) {
		s->traced_ns = r->u64;
		return;
	}
	for (size_t i = 0; i < N_HEALTH_FIELDS; i++)
		if (!strcmp(r->metric, health_fields[i].metric))
			*(__u64 *)((char *)&s->m.health + health_fields[i].offset) = r->u64;
}

/* "NAME [tid N]": a thread tied to no vCPU; its tid, or 0. */
static int thread_tid(const char *comm)
{
	const char *p = strrchr(comm, '[');
	int tid = 0;

	if (p && sscanf(p, "[tid %d]", &tid) == 1)
		return tid;
	return 0;
}

static bool same_opt(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Whether rows A and B are the same figure of one report (its rows share the reading's ts). */
static bool same_figure(const struct csv_record *a, const struct csv_record *b)
{
	return a->ts == b->ts && a->pid == b->pid && a->vm_index == b->vm_index &&
	       a->vcpu == b->vcpu && !strcmp(a->metric, b->metric) && !strcmp(a->comm, b->comm) &&
	       same_opt(a->le, b->le);
}

/* What same_figure() compares: ts too, or a long run's reports would share chains. */
static size_t figure_hash(const struct csv_record *r)
{
	uint64_t ts;
	size_t h;

	memcpy(&ts, &r->ts, sizeof(ts));
	h = hash_u64(hash_u64(hash_u64(HASH_INIT, ts), (unsigned int)r->pid),
		     (unsigned int)r->vcpu);

	return hash_str(hash_str(hash_str(h, r->metric), r->comm), r->le ? r->le : "");
}

/* Whether A and B hold one value: counts compared whole (a double holds 2^53 exactly). */
static bool same_value(const struct csv_record *a, const struct csv_record *b)
{
	if (a->kind == CSV_U64 && b->kind == CSV_U64)
		return a->u64 == b->u64;
	return a->value == b->value;
}

/*
 * A figure twice in one report with two values: which one holds? Neither is
 * kvmmmu's (a later report repeats figures with a later ts: that one holds).
 * Returns the row that contradicts an earlier one, or NULL; *FIRST that one.
 */
static const struct csv_record *contradiction(const struct csv_table *t,
					      const struct csv_record **first)
{
	size_t cap = 16, *seen;
	const struct csv_record *bad = NULL;

	while (cap < 2 * t->n_rows)
		cap *= 2;
	seen = calloc(cap, sizeof(*seen));
	if (!seen)
		return NULL;
	for (size_t i = 0; i < t->n_rows && !bad; i++) {
		const struct csv_record *r = &t->rows[i];
		size_t at = figure_hash(r) & (cap - 1);

		if (strcmp(r->source, "bpf"))
			continue;
		while (seen[at] && !same_figure(&t->rows[seen[at] - 1], r))
			at = (at + 1) & (cap - 1);
		if (!seen[at])
			seen[at] = i + 1;
		else if (!same_value(&t->rows[seen[at] - 1], r))
			bad = r, *first = &t->rows[seen[at] - 1];
	}
	free(seen);
	return bad;
}

/* R's value as its file has it: "1e3" read as 1000 is not what was written. */
static const char *as_written(const struct csv_record *r, char *buf, size_t len)
{
	if (r->value_text)
		return r->value_text;
	snprintf(buf, len, "%" PRIu64, r->u64);
	return buf;
}

int snapshot_from_csv(const struct csv_table *t, struct snapshot *snap, char *why, size_t why_len)
{
	const struct csv_record *twice, *first = NULL;
	struct loader l = {.snap = snap};
	char value[32], other[32];
	int err = 0;

	memset(snap, 0, sizeof(*snap));
	twice = contradiction(t, &first);
	if (twice) {
		snprintf(why, why_len, "line %ld: %s is %s, and %s on line %ld of the same report",
			 twice->line, twice->metric, as_written(twice, value, sizeof(value)),
			 as_written(first, other, sizeof(other)), first->line);
		return -EINVAL;
	}
	snap->sample_every = 1;
	snap->ret_pf.source = RET_PF_FROM_NONE;
	for (size_t i = 0; i < t->n_rows && !err; i++) {
		const struct csv_record *r = &t->rows[i];
		struct vm_row *vm;
		struct figures *f;

		if (r->ts > snap->wall)
			snap->wall = r->ts;
		if (strcmp(r->source, "bpf"))
			continue; /* kvm_stats and load rows: the compare command reads them itself
				   */
		if (r->kind != CSV_U64) {
			snprintf(why, why_len,
				 "line %ld: %s is a count, not '%s' (a non-negative integer, as "
				 "kvmmmu writes it)",
				 r->line, r->metric, as_written(r, value, sizeof(value)));
			err = -EINVAL;
			break;
		}
		if (r->pid == 0) {
			set_health(snap, r);
			continue;
		}
		if (!strncmp(r->metric, "event_", 6))
			continue; /* timeline rows */
		vm = loader_vm(&l, r->pid, r->vm_index ? r->vm_index : 1);
		if (!vm) {
			err = -ENOMEM;
			break;
		}
		if (r->vcpu == CSV_NO_VCPU && !thread_tid(r->comm)) {
			if (!vm->comm[0])
				snprintf(vm->comm, sizeof(vm->comm), "%.15s", r->comm);
			if (r->vm && !vm->name)
				vm->name = keep_name(&l, r->vm);
			f = &vm->total;
		} else {
			struct vcpu_row *row = model_row(vm, r->vcpu, thread_tid(r->comm));

			if (!row) {
				err = -ENOMEM;
				break;
			}
			if (!row->comm[0])
				snprintf(row->comm, sizeof(row->comm), "%.*s",
					 (int)strcspn(r->comm, "["), r->comm);
			f = &row->f;
		}
		err = set_figure(&l, f, r);
		if (err == -EINVAL)
			snprintf(why, why_len,
				 "line %ld: %s le %s is below the bucket before it (a histogram's "
				 "buckets are cumulative)",
				 r->line, r->metric, r->le);
		else if (err == -EDOM)
			snprintf(why, why_len, "line %ld: %s le '%s' is no bucket bound (%s)",
				 r->line, r->metric, r->le, "an integer, or +Inf");
		else if (err == -ERANGE)
			snprintf(why, why_len,
				 "line %ld: %s is %llu, not its +Inf bucket's %llu (both are the "
				 "histogram's count)",
				 r->line, r->metric, (unsigned long long)r->u64,
				 (unsigned long long)l.inf_count);
		if (err) {
			err = -EINVAL;
			break;
		}
	}
	for (int k = 0; k < KVMMMU_N_COUNTERS; k++)
		snap->counter_absent[k] = snap->m.n_vms && !l.counter_seen[k];
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		snap->hist_max_absent[h] = !l.hist_max_seen[h];
	for (size_t i = 0; i < snap->m.n_vms; i++) {
		struct vm_row *vm = &snap->m.vms[i];

		for (int h = 0; h < KVMMMU_N_HISTS; h++)
			finish_hist(&vm->total.hist[h]);
		for (int m = 0; m < KVMMMU_LOCK_MODES; m++)
			finish_hist(&vm->total.lock_wait[m]);
		for (size_t k = 0; k < vm->n_rows; k++) {
			for (int h = 0; h < KVMMMU_N_HISTS; h++)
				finish_hist(&vm->rows[k].f.hist[h]);
			for (int m = 0; m < KVMMMU_LOCK_MODES; m++)
				finish_hist(&vm->rows[k].f.lock_wait[m]);
		}
	}
	tdestroy(l.pids, free);
	snap->names = l.names;
	snap->n_names = l.n_names;
	model_sort(&snap->m);
	if (err)
		snapshot_free(snap);
	return err;
}
