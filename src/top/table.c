// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "array.h"
#include "vm_name.h"

static const struct {
	const char *header;
	int width;
} cols[N_TOP_COLS] = {
	[COL_NAME] = {"VM", 16},
	[COL_PID] = {"PID", 7},
	[COL_VCPUS] = {"VCPU", 4},
	[COL_FAULTS] = {"FAULTS/s", 10},
	[COL_FIXED] = {"FIX%", 5},
	[COL_SPURIOUS] = {"SPUR%", 5},
	[COL_EMULATE] = {"EMUL%", 5},
	[COL_RETRY] = {"RETRY%", 6},
	[COL_WRITE_PROTECTED] = {"WP%", 5},
	[COL_FAST] = {"FAST%", 5},
	[COL_TDP] = {"TDP%", 5},
	[COL_SHADOW] = {"SHAD%", 5},
	[COL_DIRECT] = {"DIR%", 5},
	[COL_P50] = {"P50us", 7},
	[COL_P99] = {"P99us", 7},
	[COL_MAX] = {"MAXus", 8},
	[COL_LOCK] = {"LOCK%", 5},
	[COL_MEMSLOT] = {"SLOT/F", 6},
	[COL_ZAPPED] = {"ZAP/s", 7},
	[COL_DIRTY] = {"DIRTY", 5},
};

/* The outcome columns and the RET_PF_* names they show. */
static const struct {
	enum top_col col;
	const char *ret_pf;
} outcomes[] = {
	{COL_FIXED, "fixed"},
	{COL_SPURIOUS, "spurious"},
	{COL_EMULATE, "emulate"},
	{COL_RETRY, "retry"},
	{COL_WRITE_PROTECTED, "write_protected"},
};

static const char *const sort_names[N_TOP_SORTS] = {"faults", "name", "pid", "p99", "lock"};

static int ret_pf_slot(const struct snapshot *s, const char *name)
{
	for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++)
		if (s->ret_pf.name[r] && !strcmp(s->ret_pf.name[r], name))
			return r;
	return -1;
}

static double share(__u64 part, __u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : -1;
}

/* The best latency figure the probes give: whole faults, else walk-to-SPTE (shadow path). */
static int latency_hist(const struct snapshot *s, const char **name)
{
	if (s->hist_available[KVMMMU_HIST_FAULT]) {
		*name = "fault_ns";
		return KVMMMU_HIST_FAULT;
	}
	if (s->hist_available[KVMMMU_HIST_WALK_TO_SPTE]) {
		*name = "walk_to_spte_ns";
		return KVMMMU_HIST_WALK_TO_SPTE;
	}
	*name = NULL;
	return -1;
}

static void fill_row(const struct top_table *t, const struct snapshot *s, struct top_row *row,
		     const struct figures *fg, const struct figures *cum)
{
	__u64 faults = fg->counters[KVMMMU_FAULTS];
	double per = t->since_start ? 1 : t->seconds > 0 ? t->seconds : 1;
	const char *lname;
	int lh = latency_hist(s, &lname);

	row->v[COL_FAULTS] = (double)faults / per;
	for (size_t i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++) {
		int slot = ret_pf_slot(s, outcomes[i].ret_pf);

		row->v[outcomes[i].col] = slot >= 0 ? share(fg->ret_pf[slot], faults) : -1;
	}
	row->v[COL_FAST] = share(fg->counters[KVMMMU_PATH_FAST], faults);
	row->v[COL_TDP] = share(fg->counters[KVMMMU_PATH_TDP_MMU], faults);
	row->v[COL_SHADOW] = share(fg->counters[KVMMMU_PATH_SHADOW], faults);
	row->v[COL_DIRECT] = share(fg->counters[KVMMMU_PATH_DIRECT], faults);
	row->v[COL_P50] = row->v[COL_P99] = row->v[COL_MAX] = -1;
	if (lh >= 0 && fg->hist[lh].count) {
		row->v[COL_P50] = (double)hist_percentile(&fg->hist[lh], 0.5) / 1e3;
		row->v[COL_P99] = (double)hist_percentile(&fg->hist[lh], 0.99) / 1e3;
		row->v[COL_MAX] = (double)fg->hist[lh].max_ns / 1e3;
	}
	row->v[COL_LOCK] = -1;
	if (lh >= 0 && fg->hist[lh].sum_ns)
		row->v[COL_LOCK] = share(fg->lock_wait[KVMMMU_LOCK_READ].sum_ns +
						 fg->lock_wait[KVMMMU_LOCK_WRITE].sum_ns,
					 fg->hist[lh].sum_ns);
	row->v[COL_MEMSLOT] =
		faults ? (double)fg->counters[KVMMMU_MEMSLOT_LOOKUPS] / (double)faults : -1;
	row->v[COL_ZAPPED] = (double)fg->mmu[KVMMMU_SHADOW_PAGES_ZAPPED] / per;
	/* dirty logging is on while more enables than disables were seen, since the start */
	row->v[COL_DIRTY] =
		cum->mmu[KVMMMU_DIRTY_LOG_ENABLES] > cum->mmu[KVMMMU_DIRTY_LOG_DISABLES] ? 1 : 0;
}

static struct top_row *add_row(struct top_table *t)
{
	struct top_row *r = array_grow(t->rows, t->n + 1, &t->cap, sizeof(*t->rows));

	if (!r)
		return NULL;
	t->rows = r;
	r = &t->rows[t->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

static void set_name(struct top_row *r, const char *name)
{
	char *esc = vm_name_escape(name);
	const char *n = esc ? esc : name;
	size_t len = strlen(n);

	/* too long for the column: the start, and a mark that it goes on */
	if (len >= sizeof(r->name))
		snprintf(r->name, sizeof(r->name), "%.*s~", (int)sizeof(r->name) - 2, n);
	else
		snprintf(r->name, sizeof(r->name), "%s", n);
	free(esc);
}

/* A VM's name, and "#I" after it when its process holds several VMs (snapshot_vm_place). */
static void set_vm_name(struct top_row *r, const struct model *m, const struct vm_row *vm)
{
	char name[sizeof(r->name) + 16];

	if (model_process_vms(m, vm->pid) < 2) {
		set_name(r, vm->name ? vm->name : vm->comm);
		return;
	}
	snprintf(name, sizeof(name), "%.*s #%d", (int)sizeof(r->name) - 8,
		 vm->name ? vm->name : vm->comm, vm->index);
	set_name(r, name);
}

/* Which columns CUR can fill, and for the others why not. */
static void columns(struct top_table *t, const struct snapshot *cur)
{
	for (int c = 0; c < N_TOP_COLS; c++) {
		t->have[c] = true;
		t->why[c] = NULL;
	}
	for (size_t i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++) {
		t->have[outcomes[i].col] = ret_pf_slot(cur, outcomes[i].ret_pf) >= 0;
		t->why[outcomes[i].col] = "this kernel has no such RET_PF_* value";
	}
	latency_hist(cur, &t->latency);
	t->have[COL_P50] = t->have[COL_P99] = t->have[COL_MAX] = t->latency != NULL;
	t->why[COL_P50] = t->why[COL_P99] = t->why[COL_MAX] = "no latency histogram in this mode";
	t->have[COL_LOCK] = cur->lock_ok && t->latency;
	t->why[COL_LOCK] = !cur->lock_ok ? "no mmu_lock probes (lock:contention_begin/end)"
					 : "no fault time to share it with";
	t->have[COL_MEMSLOT] = cur->hist_available[KVMMMU_HIST_MEMSLOT];
	t->why[COL_MEMSLOT] = cur->hist_why[KVMMMU_HIST_MEMSLOT]
				      ? cur->hist_why[KVMMMU_HIST_MEMSLOT]
				      : "needs kvm_vcpu_gfn_to_memslot (function probes)";
	t->have[COL_ZAPPED] = t->have[COL_DIRTY] = cur->events_ok;
	t->why[COL_ZAPPED] = t->why[COL_DIRTY] = "no MMU lifecycle probes";
	for (int c = 0; c < N_TOP_COLS; c++)
		if (t->have[c])
			t->why[c] = NULL;
}

int top_table_build(struct top_table *t, const struct snapshot *cur, const struct snapshot *prev,
		    double dt, bool since_start, int vm_pid, int vm_index)
{
	struct model delta = {};
	const struct model *m = &cur->m;
	struct figures all = {}, all_cum = {};

	t->n = 0;
	t->since_start = since_start;
	t->seconds = dt;
	if (prev) {
		if (model_delta(&delta, &cur->m, &prev->m))
			return -ENOMEM;
		m = &delta;
	}
	columns(t, cur);
	for (size_t i = 0; i < m->n_vms; i++) {
		const struct vm_row *vm = &m->vms[i];
		const struct vm_row *cvm = model_find_vm(&cur->m, vm->pid, vm->index);
		struct top_row *r;

		if (vm_pid > 0 && (vm->pid != vm_pid || vm->index != vm_index))
			continue;
		figures_add(&all, &vm->total);
		figures_add(&all_cum, &cvm->total);
		if (vm_pid <= 0) {
			size_t vcpus = 0;

			for (size_t k = 0; k < vm->n_rows; k++)
				vcpus += vm->rows[k].vcpu >= 0;
			/*
			 * A process with no vCPU and no fault is not a VM: one that only
			 * closed a VM's last fd (and so ran its teardown's zaps).
			 */
			if (!vcpus && !cvm->total.counters[KVMMMU_FAULTS])
				continue;
			r = add_row(t);
			if (!r)
				goto nomem;
			set_vm_name(r, &cur->m, vm);
			r->pid = vm->pid;
			r->vm_index = vm->index;
			r->vcpu = -1;
			r->gone = vm->gone;
			fill_row(t, cur, r, &vm->total, &cvm->total);
			r->v[COL_VCPUS] = (double)vcpus;
			continue;
		}
		for (size_t k = 0; k < vm->n_rows; k++) {
			const struct vcpu_row *row = &vm->rows[k];

			if (row->vcpu < 0)
				continue; /* the VMM's other threads: in the VM's row */
			r = add_row(t);
			if (!r)
				goto nomem;
			set_name(r, row->comm);
			r->pid = vm->pid;
			r->vm_index = vm->index;
			r->vcpu = row->vcpu;
			r->gone = vm->gone;
			fill_row(t, cur, r, &row->f, &cvm->total);
			r->v[COL_VCPUS] = row->vcpu;
		}
	}
	/* since the start, TOTAL keeps what exited VMs did: a count that never falls */
	if (t->exited && since_start && vm_pid <= 0)
		figures_add(&all, t->exited);
	memset(&t->total, 0, sizeof(t->total));
	snprintf(t->total.name, sizeof(t->total.name), "TOTAL");
	t->total.vcpu = -1;
	fill_row(t, cur, &t->total, &all, &all_cum);
	t->total.v[COL_VCPUS] = 0;
	for (size_t i = 0; i < t->n; i++)
		t->total.v[COL_VCPUS] += vm_pid > 0 ? 1 : t->rows[i].v[COL_VCPUS];
	model_free(&delta);
	return 0;
nomem:
	model_free(&delta);
	return -ENOMEM;
}

static enum top_sort sort_key;
static bool sort_invert;

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	int c = 0;

	switch (sort_key) {
	case SORT_NAME:
		c = strcmp(x->name, y->name);
		break;
	case SORT_PID:
		c = (x->pid > y->pid) - (x->pid < y->pid);
		break;
	case SORT_FAULTS:
	case SORT_P99:
	case SORT_LOCK: {
		enum top_col col = sort_key == SORT_FAULTS ? COL_FAULTS
				   : sort_key == SORT_P99  ? COL_P99
							   : COL_LOCK;

		/* the biggest first */
		c = (x->v[col] < y->v[col]) - (x->v[col] > y->v[col]);
		break;
	}
	default:
		break;
	}
	if (!c) /* stable on screen: then by pid, VM, then vCPU */
		c = (x->pid > y->pid) - (x->pid < y->pid);
	if (!c)
		c = (x->vm_index > y->vm_index) - (x->vm_index < y->vm_index);
	if (!c)
		c = (x->vcpu > y->vcpu) - (x->vcpu < y->vcpu);
	return sort_invert ? -c : c;
}

void top_table_sort(struct top_table *t, enum top_sort key, bool invert)
{
	sort_key = key;
	sort_invert = invert;
	if (t->n > 1) /* no rows: rows may be NULL, which qsort() must not get */
		qsort(t->rows, t->n, sizeof(*t->rows), cmp_rows);
}

void top_table_free(struct top_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const char *top_col_header(const struct top_table *t, enum top_col c)
{
	if (c == COL_FAULTS && t->since_start)
		return "FAULTS";
	if (c == COL_ZAPPED && t->since_start)
		return "ZAPPED";
	return cols[c].header;
}

int top_col_width(enum top_col c)
{
	return cols[c].width;
}

void top_cell(const struct top_table *t, const struct top_row *r, enum top_col c, char *buf,
	      size_t len)
{
	double v = r->v[c];

	switch (c) {
	case COL_NAME:
		snprintf(buf, len, "%s", r->name);
		return;
	case COL_PID:
		snprintf(buf, len, "%d", r->pid);
		return;
	case COL_VCPUS:
		snprintf(buf, len, "%.0f", v);
		return;
	case COL_DIRTY:
		snprintf(buf, len, "%s", v > 0 ? "on" : "-");
		return;
	default:
		break;
	}
	if (v < 0)
		snprintf(buf, len, "-");
	else if (c == COL_FAULTS || c == COL_ZAPPED)
		snprintf(buf, len, t->since_start ? "%.0f" : "%.0f", v);
	else if (c == COL_MEMSLOT)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.1f", v);
}

const char *top_sort_name(enum top_sort key)
{
	return key < N_TOP_SORTS ? sort_names[key] : "?";
}

int top_sort_parse(const char *s, enum top_sort *key)
{
	for (int k = 0; k < N_TOP_SORTS; k++)
		if (!strcmp(s, sort_names[k])) {
			*key = (enum top_sort)k;
			return 0;
		}
	return -EINVAL;
}

static void print_row(FILE *f, const struct top_table *t, const struct top_row *r)
{
	char cell[80];

	for (int c = 0; c < N_TOP_COLS; c++) {
		if (!t->have[c])
			continue;
		top_cell(t, r, c, cell, sizeof(cell));
		if (c == COL_NAME && r->gone) /* exited: its last figures, marked */
			snprintf(cell, sizeof(cell), "%s*", r->name);
		if (c == COL_NAME && (int)strlen(cell) > top_col_width(c))
			/* cut to the column, with a mark that it goes on */
			fprintf(f, "%.*s~", top_col_width(c) - 1, cell);
		else
			fprintf(f, c == COL_NAME ? "%-*s" : " %*s", top_col_width(c), cell);
	}
	fputc('\n', f);
}

void top_print_table(FILE *f, const struct top_table *t)
{
	for (int c = 0; c < N_TOP_COLS; c++)
		if (t->have[c])
			fprintf(f, c == COL_NAME ? "%-*s" : " %*s", top_col_width(c),
				top_col_header(t, c));
	fputc('\n', f);
	for (size_t i = 0; i < t->n; i++)
		print_row(f, t, &t->rows[i]);
	print_row(f, t, &t->total);
}
