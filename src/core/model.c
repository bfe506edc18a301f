// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "model.h"
#include "array.h"

const struct health_field health_fields[N_HEALTH_FIELDS] = {
	{"drops", "thread_map_full", offsetof(struct kvmmmu_health, drops)},
	{"bad_ret_pf", "bad_ret_pf", offsetof(struct kvmmmu_health, bad_ret)},
	{"thread_news_lost", "thread_news_lost", offsetof(struct kvmmmu_health, news_lost)},
	{"ioctl_calls_untimed", "ioctl_calls_untimed", offsetof(struct kvmmmu_health, calls_full)},
	{"memslot_flags_lost", "memslot_flags_lost", offsetof(struct kvmmmu_health, slots_full)},
	{"timeline_events_lost", "timeline_events_lost",
	 offsetof(struct kvmmmu_health, timeline_lost)},
	{"kprobe_missed", "kprobe_missed", offsetof(struct kvmmmu_health, kprobe_missed)},
	{"prog_missed", "prog_missed", offsetof(struct kvmmmu_health, prog_missed)},
	{"exits_lost", "exits_lost", offsetof(struct kvmmmu_health, exits_lost)},
	{"children_untraced", "pid_filter_full", offsetof(struct kvmmmu_health, pids_full)},
	{"thread_vm_switches", "thread_vm_switch", offsetof(struct kvmmmu_health, vm_switches)},
	{"slow_faults_lost", "slow_faults_lost", offsetof(struct kvmmmu_health, slow_lost)},
	{"region_faults_lost", "region_map_full", offsetof(struct kvmmmu_health, regions_full)},
};
_Static_assert(N_HEALTH_FIELDS * sizeof(__u64) == sizeof(struct kvmmmu_health),
	       "every health counter has its name");

const char *const kvmmmu_phase_names[KVMMMU_N_PHASES] = {[KVMMMU_PHASE_WALK] = "walk",
							 [KVMMMU_PHASE_PFN] = "pfn",
							 [KVMMMU_PHASE_LOCK] = "mmu_lock",
							 [KVMMMU_PHASE_MAP] = "map",
							 [KVMMMU_PHASE_OTHER] = "other"};

const int kvmmmu_phase_hist[KVMMMU_N_PHASES] = {[KVMMMU_PHASE_WALK] = KVMMMU_HIST_PHASE_WALK,
						[KVMMMU_PHASE_PFN] = KVMMMU_HIST_PHASE_PFN,
						[KVMMMU_PHASE_LOCK] = KVMMMU_HIST_PHASE_LOCK,
						[KVMMMU_PHASE_MAP] = KVMMMU_HIST_PHASE_MAP,
						[KVMMMU_PHASE_OTHER] = KVMMMU_HIST_PHASE_OTHER};

int figures_phase_whole(const struct figures *f)
{
	const struct kvmmmu_hist *other = &f->hist[KVMMMU_HIST_PHASE_OTHER];
	__u64 sum = 0;

	for (int p = 0; p < KVMMMU_N_PHASES; p++)
		sum += f->hist[kvmmmu_phase_hist[p]].sum_ns;
	/* exact, but for a fault whose phases overran it (other 0): then by count */
	if (f->hist[KVMMMU_HIST_FAULT].sum_ns == sum)
		return KVMMMU_HIST_FAULT;
	if (f->hist[KVMMMU_HIST_WALK_TO_SPTE].sum_ns == sum)
		return KVMMMU_HIST_WALK_TO_SPTE;
	return f->hist[KVMMMU_HIST_FAULT].count == other->count ? KVMMMU_HIST_FAULT
								: KVMMMU_HIST_WALK_TO_SPTE;
}

const char *const kvmmmu_fault_path_names[KVMMMU_N_FAULT_PATHS] = {
	[KVMMMU_FP_FAST] = "fast",
	[KVMMMU_FP_TDP_MMU] = "tdp_mmu",
	[KVMMMU_FP_SHADOW] = "shadow",
	[KVMMMU_FP_DIRECT] = "direct",
};

const char *const kvmmmu_lock_hist_names[KVMMMU_LOCK_MODES] = {
	[KVMMMU_LOCK_READ] = "mmu_lock_read_wait_ns",
	[KVMMMU_LOCK_WRITE] = "mmu_lock_write_wait_ns",
};

const char *const mmu_time_names[N_MMU_TIMES] = {
	[DIRTY_LOG_ENABLE_NS] = "dirty_log_enable_ns",
	[DIRTY_LOG_DISABLE_NS] = "dirty_log_disable_ns",
	[DIRTY_LOG_GET_NS] = "dirty_log_get_ns",
	[DIRTY_LOG_CLEAR_NS] = "dirty_log_clear_ns",
	[ROOT_LOAD_NS] = "root_load_ns",
};

int counter_index(const char *name)
{
	for (int i = 0; i < KVMMMU_N_COUNTERS; i++)
		if (!strcmp(kvmmmu_counter_names[i], name))
			return i;
	return -1;
}

int outcome_metric_path(const char *metric, const char **ret_name)
{
	size_t n;

	if (strncmp(metric, "outcome_", 8))
		return -1;
	metric += 8;
	for (int p = 0; p < KVMMMU_N_FAULT_PATHS; p++) {
		n = strlen(kvmmmu_fault_path_names[p]);
		if (!strncmp(metric, kvmmmu_fault_path_names[p], n) && metric[n] == '_' &&
		    metric[n + 1]) {
			*ret_name = metric + n + 1;
			return p;
		}
	}
	return -1;
}

int hist_index(const char *name)
{
	for (int i = 0; i < KVMMMU_N_HISTS; i++)
		if (!strcmp(kvmmmu_hist_names[i], name))
			return i;
	return -1;
}

const struct vm_row *model_find_vm(const struct model *m, int pid, int index)
{
	/* the VM added last first: a CSV's rows, and a reading's threads, come by VM */
	if (m->n_vms && m->vms[m->n_vms - 1].pid == pid && m->vms[m->n_vms - 1].index == index)
		return &m->vms[m->n_vms - 1];
	for (size_t i = 0; i < m->n_vms; i++)
		if (m->vms[i].pid == pid && m->vms[i].index == index)
			return &m->vms[i];
	return NULL;
}

struct vm_row *model_vm(struct model *m, int pid, int index)
{
	struct vm_row *vm = (struct vm_row *)model_find_vm(m, pid, index);

	return vm ? vm : model_vm_add(m, pid, index);
}

size_t model_process_vms(const struct model *m, int pid)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n_vms; i++)
		n += m->vms[i].pid == pid;
	return n;
}

struct vm_row *model_vm_add(struct model *m, int pid, int index)
{
	struct vm_row *vms;

	vms = array_grow(m->vms, m->n_vms + 1, &m->cap_vms, sizeof(*vms));
	if (!vms)
		return NULL;
	m->vms = vms;
	memset(&vms[m->n_vms], 0, sizeof(vms[0]));
	vms[m->n_vms].pid = pid;
	vms[m->n_vms].index = index;
	return &vms[m->n_vms++];
}

struct vcpu_row *model_row(struct vm_row *vm, int vcpu, int tid)
{
	struct vcpu_row *rows;

	for (size_t i = 0; i < vm->n_rows; i++) {
		struct vcpu_row *r = &vm->rows[i];

		if (vcpu >= 0 ? r->vcpu == vcpu : (r->vcpu < 0 && r->tid == tid))
			return r;
	}
	rows = array_grow(vm->rows, vm->n_rows + 1, &vm->cap_rows, sizeof(*rows));
	if (!rows)
		return NULL;
	vm->rows = rows;
	memset(&rows[vm->n_rows], 0, sizeof(rows[0]));
	rows[vm->n_rows].vcpu = vcpu;
	rows[vm->n_rows].tid = tid; /* a vCPU's: its first thread, to follow it across reports */
	return &rows[vm->n_rows++];
}

static int cmp_rows(const void *a, const void *b)
{
	const struct vcpu_row *x = a, *y = b;

	if ((x->vcpu < 0) != (y->vcpu < 0))
		return x->vcpu < 0 ? 1 : -1;
	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_vms(const void *a, const void *b)
{
	const struct vm_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Rows and VMs (17 KiB of figures each) in order already, as a reading's
 * rows often are: no sort, which would allocate and index them all first.
 */
static bool sorted(const void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		if (cmp((const char *)base + (i - 1) * size, (const char *)base + i * size) > 0)
			return false;
	return true;
}

static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (!sorted(base, n, size, cmp))
		qsort(base, n, size, cmp);
}

void model_sort(struct model *m)
{
	sort(m->vms, m->n_vms, sizeof(m->vms[0]), cmp_vms);
	for (size_t i = 0; i < m->n_vms; i++)
		sort(m->vms[i].rows, m->vms[i].n_rows, sizeof(m->vms[i].rows[0]), cmp_rows);
}

void model_free(struct model *m)
{
	for (size_t i = 0; i < m->n_vms; i++)
		free(m->vms[i].rows);
	free(m->vms);
	memset(m, 0, sizeof(*m));
}

static void add_u64(__u64 *dst, const __u64 *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] += src[i];
}

static void sub_u64(__u64 *dst, const __u64 *prev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] -= prev[i];
}

/*
 * An empty histogram adds nothing: most of a thread's are (each is some
 * 1.3 KiB, and an exporter's scrape merges every thread's twice). BPF counts
 * a sample's slot before its count, so a count of 0 read mid-update is the
 * state before that sample, which the next read completes.
 */
static void hist_merge(struct kvmmmu_hist *d, const struct kvmmmu_hist *s, size_t n)
{
	for (size_t h = 0; h < n; h++) {
		if (!s[h].count)
			continue;
		add_u64(&d[h].count, &s[h].count, 2); /* count, sum_ns */
		if (s[h].max_ns > d[h].max_ns)
			d[h].max_ns = s[h].max_ns;
		add_u64(d[h].slots, s[h].slots, KVMMMU_HIST_BUCKETS);
	}
}

/* max_ns stays: a maximum cannot be subtracted. */
/*
 * D -= PREV, bucket by bucket. A maximum cannot be subtracted: the interval's
 * is the whole run's when it lies in the interval's highest bucket, else at
 * most that bucket's upper bound (the bound percentiles give too).
 */
static void hist_unmerge(struct kvmmmu_hist *d, const struct kvmmmu_hist *prev, size_t n)
{
	for (size_t h = 0; h < n; h++) {
		__u32 top = KVMMMU_HIST_BUCKETS;

		sub_u64(&d[h].count, &prev[h].count, 2);
		sub_u64(d[h].slots, prev[h].slots, KVMMMU_HIST_BUCKETS);
		while (top > 0 && !d[h].slots[top - 1])
			top--;
		if (!top)
			d[h].max_ns = 0;
		else if (kvmmmu_hist_slot(d[h].max_ns) != top - 1)
			d[h].max_ns = kvmmmu_hist_slot_high(top - 1);
	}
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

void figures_add(struct figures *dst, const struct figures *src)
{
	add_u64(dst->counters, src->counters, ARRAY_LEN(src->counters));
	add_u64(dst->ret_pf, src->ret_pf, ARRAY_LEN(src->ret_pf));
	add_u64(dst->outcomes[0], src->outcomes[0], sizeof(src->outcomes) / sizeof(__u64));
	add_u64(dst->mmu, src->mmu, ARRAY_LEN(src->mmu));
	add_u64(dst->mmu_ns, src->mmu_ns, ARRAY_LEN(src->mmu_ns));
	add_u64(dst->lock_other_waits, src->lock_other_waits, ARRAY_LEN(src->lock_other_waits));
	add_u64(dst->lock_other_wait_ns, src->lock_other_wait_ns,
		ARRAY_LEN(src->lock_other_wait_ns));
	hist_merge(dst->hist, src->hist, ARRAY_LEN(src->hist));
	hist_merge(dst->lock_wait, src->lock_wait, ARRAY_LEN(src->lock_wait));
}

void figures_sub(struct figures *dst, const struct figures *cur, const struct figures *prev)
{
	*dst = *cur;
	sub_u64(dst->counters, prev->counters, ARRAY_LEN(prev->counters));
	sub_u64(dst->ret_pf, prev->ret_pf, ARRAY_LEN(prev->ret_pf));
	sub_u64(dst->outcomes[0], prev->outcomes[0], sizeof(prev->outcomes) / sizeof(__u64));
	sub_u64(dst->mmu, prev->mmu, ARRAY_LEN(prev->mmu));
	sub_u64(dst->mmu_ns, prev->mmu_ns, ARRAY_LEN(prev->mmu_ns));
	sub_u64(dst->lock_other_waits, prev->lock_other_waits, ARRAY_LEN(prev->lock_other_waits));
	sub_u64(dst->lock_other_wait_ns, prev->lock_other_wait_ns,
		ARRAY_LEN(prev->lock_other_wait_ns));
	hist_unmerge(dst->hist, prev->hist, ARRAY_LEN(prev->hist));
	hist_unmerge(dst->lock_wait, prev->lock_wait, ARRAY_LEN(prev->lock_wait));
}

int model_copy(struct model *dst, const struct model *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->health = src->health;
	dst->cap_vms = src->n_vms ? src->n_vms : 1;
	dst->vms = calloc(dst->cap_vms, sizeof(*dst->vms));
	if (!dst->vms)
		return -ENOMEM;
	for (size_t i = 0; i < src->n_vms; i++) {
		dst->vms[i] = src->vms[i];
		dst->vms[i].cap_rows = src->vms[i].n_rows ? src->vms[i].n_rows : 1;
		dst->vms[i].rows = malloc(dst->vms[i].cap_rows * sizeof(struct vcpu_row));
		if (!dst->vms[i].rows) {
			dst->n_vms = i;
			model_free(dst);
			return -ENOMEM;
		}
		if (src->vms[i].n_rows) /* rows may be NULL then: memcpy wants neither */
			memcpy(dst->vms[i].rows, src->vms[i].rows,
			       src->vms[i].n_rows * sizeof(struct vcpu_row));
		dst->n_vms = i + 1;
	}
	return 0;
}

/*
 * ROW's figures in the previous report: the same vCPU, or the same thread
 * without one. A thread first shown without a vCPU and now tied to one
 * (found in /proc later) is followed by its tid, so that its vCPU's
 * interval holds only what happened in the interval, not all it ever did.
 */
static const struct vcpu_row *previous_row(const struct vm_row *old, const struct vcpu_row *row)
{
	for (size_t o = 0; o < old->n_rows; o++) {
		const struct vcpu_row *was = &old->rows[o];

		if (row->vcpu >= 0 ? was->vcpu == row->vcpu : was->vcpu < 0 && was->tid == row->tid)
			return was;
	}
	for (size_t o = 0; row->vcpu >= 0 && o < old->n_rows; o++)
		if (old->rows[o].vcpu < 0 && old->rows[o].tid == row->tid)
			return &old->rows[o];
	return NULL;
}

int model_delta(struct model *dst, const struct model *cur, const struct model *prev)
{
	int err = model_copy(dst, cur);

	if (err)
		return err;
	for (size_t k = 0; k < N_HEALTH_FIELDS; k++)
		*(__u64 *)((char *)&dst->health + health_fields[k].offset) -=
			health_value(&prev->health, &health_fields[k]);
	for (size_t i = 0; i < dst->n_vms; i++) {
		struct vm_row *vm = &dst->vms[i];
		const struct vm_row *old = model_find_vm(prev, vm->pid, vm->index);

		if (!old)
			continue;
		figures_sub(&vm->total, &vm->total, &old->total);
		for (size_t r = 0; r < vm->n_rows; r++) {
			struct vcpu_row *row = &vm->rows[r];
			const struct vcpu_row *was = previous_row(old, row);

			if (was)
				figures_sub(&row->f, &row->f, &was->f);
		}
	}
	return 0;
}

__u64 hist_percentile(const struct kvmmmu_hist *h, double p)
{
	__u64 rank, seen = 0;

	if (!h->count)
		return 0;
	rank = (__u64)(p * (double)h->count);
	if ((double)rank < p * (double)h->count)
		rank++;
	if (rank < 1)
		rank = 1;
	for (__u32 b = 0; b < KVMMMU_HIST_BUCKETS; b++) {
		seen += h->slots[b];
		if (seen >= rank) {
			__u64 high = kvmmmu_hist_slot_high(b);

			return high < h->max_ns ? high : h->max_ns;
		}
	}
	return h->max_ns;
}
