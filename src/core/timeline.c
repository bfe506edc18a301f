// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"
#include "array.h"

static bool same_vm(const struct timeline_event *a, const struct timeline_event *b)
{
	return a->ev.tgid == b->ev.tgid && a->vm_index == b->vm_index;
}

int timeline_append(struct timeline *x, const struct kvmmmu_event *ev, int vm_index, double wall)
{
	struct timeline_event *t;
	__u64 before = 0;

	t = array_grow(x->events, x->n + 1, &x->cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	x->events = t;
	for (size_t i = x->n; i-- > 0;) {
		if (t[i].ev.tgid == ev->tgid && t[i].vm_index == vm_index) {
			before = t[i].ev.faults;
			break;
		}
	}
	t[x->n] = (struct timeline_event){
		.ev = *ev,
		.vm_index = vm_index,
		.wall = wall,
		.faults_between = ev->faults >= before ? ev->faults - before : 0,
	};
	x->n++;
	return 0;
}

size_t timeline_forget(struct timeline *x, int pid, size_t before)
{
	size_t kept = 0, gone_before = 0;

	for (size_t i = 0; i < x->n; i++) {
		if ((int)x->events[i].ev.tgid == pid) {
			gone_before += i < before;
			continue;
		}
		x->events[kept++] = x->events[i];
	}
	x->n = kept;
	return gone_before;
}

size_t timeline_trim(struct timeline *x, size_t before)
{
	size_t n = x->n, kept = n, went = 0;

	/* from the end: an old event stays when no later one is of its VM */
	for (size_t i = n; i-- > 0;) {
		bool keep = true;

		for (size_t j = kept; i < before && keep && j < n; j++)
			keep = !same_vm(&x->events[j], &x->events[i]);
		if (keep)
			x->events[--kept] = x->events[i];
		else
			went++;
	}
	if (kept)
		memmove(x->events, x->events + kept, (n - kept) * sizeof(*x->events));
	x->n = n - kept;
	return went;
}

size_t timeline_cap(struct timeline *x, size_t *seen)
{
	size_t n = x->n, need, kept = 0, went = 0, went_seen = 0, n_vms = 0;
	bool *latest;
	size_t *vms; /* each VM's latest event */

	if (n <= TIMELINE_MAX_EVENTS)
		return 0;
	need = n - TIMELINE_MAX_EVENTS / 4 * 3;
	latest = calloc(n, sizeof(*latest));
	vms = calloc(n, sizeof(*vms));
	if (!latest || !vms) {
		free(latest);
		free(vms);
		return 0; /* kept whole: the next event tries again */
	}
	/* from the end: each VM's first event met is its latest (VMs are few) */
	for (size_t i = n; i-- > 0;) {
		size_t v = 0;

		while (v < n_vms && !same_vm(&x->events[vms[v]], &x->events[i]))
			v++;
		if (v == n_vms) {
			vms[n_vms++] = i;
			latest[i] = true;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (went < need && !latest[i]) {
			went++;
			went_seen += i < *seen;
			continue;
		}
		x->events[kept++] = x->events[i];
	}
	free(latest);
	free(vms);
	x->n = kept;
	x->capped += went;
	*seen -= went_seen;
	return went;
}

void timeline_free(struct timeline *x)
{
	free(x->events);
	memset(x, 0, sizeof(*x));
}

const char *timeline_kind_str(__u32 kind)
{
	static const char *const names[] = {
		[KVMMMU_EV_MEMSLOT_CREATE] = "memslot_create",
		[KVMMMU_EV_MEMSLOT_DELETE] = "memslot_delete",
		[KVMMMU_EV_MEMSLOT_UPDATE] = "memslot_update",
		[KVMMMU_EV_DIRTY_LOG_ON] = "dirty_log_on",
		[KVMMMU_EV_DIRTY_LOG_OFF] = "dirty_log_off",
		[KVMMMU_EV_GET_DIRTY_LOG] = "get_dirty_log",
		[KVMMMU_EV_CLEAR_DIRTY_LOG] = "clear_dirty_log",
		[KVMMMU_EV_ZAP_ALL_FAST] = "zap_all_fast",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}
