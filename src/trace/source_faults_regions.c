// SPDX-License-Identifier: GPL-2.0
/*
 * --metric regions: the faults object's hash of VM, memslot, region and
 * epoch (the VM's timeline events before the fault; struct
 * kvmmmu_region_key). An epoch ends at the VM's next event: its counts are
 * then taken out of the map, added to the regions' totals, and kept apart
 * until that event takes them as the storm before it. The map holds only
 * the epochs in progress, however many events a long run has.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "source_faults.h" /* first: the skeleton needs kvmmmu.h's types */
#include "faults.skel.h"
#include "array.h"
#include "map_iter.h"

/* A VM's epoch in progress, as vm_births says (read once a VM and a read). */
struct vm_epoch {
	__u64 kvm, born;
	__u32 tgid;
	__u32 epoch;
	bool known; /* the VM is in vm_births: else it is gone, and every count is final */
};

struct read_regions {
	struct faults_source *fs;
	struct regions *live;		 /* counts of the epochs in progress */
	struct kvmmmu_region_key *ended; /* keys of the epochs that ended */
	size_t n_ended, cap_ended;
	struct vm_epoch *vms;
	size_t n_vms, cap_vms;
	int births_fd;
};

static const struct vm_epoch *vm_epoch(struct read_regions *r, const struct kvmmmu_region_key *k)
{
	struct kvmmmu_vm_birth b;
	struct vm_epoch *v;

	for (size_t i = 0; i < r->n_vms; i++) {
		v = &r->vms[i];
		if (v->kvm == k->kvm && v->born == k->kvm_born && v->tgid == k->tgid)
			return v;
	}
	v = array_grow(r->vms, r->n_vms + 1, &r->cap_vms, sizeof(*v));
	if (!v)
		return NULL;
	r->vms = v;
	v = &r->vms[r->n_vms++];
	*v = (struct vm_epoch){.kvm = k->kvm, .born = k->kvm_born, .tgid = k->tgid};
	v->known = !bpf_map_lookup_elem(r->births_fd, &k->kvm, &b) && b.tgid == k->tgid &&
		   b.born_ns == k->kvm_born;
	v->epoch = v->known ? b.epoch : 0;
	return v;
}

static struct region_count region_count(const struct faults_source *fs,
					const struct kvmmmu_region_key *k, __u64 faults)
{
	return (struct region_count){
		.pid = (int)k->tgid,
		.vm_index = threads_vm_index(fs->threads, (int)k->tgid, k->kvm, k->kvm_born),
		.slot = k->slot,
		.epoch = k->epoch,
		.base = k->region << fs->opts->region_shift,
		.faults = faults,
	};
}

static int read_region(const void *key, const void *value, void *ctx)
{
	const struct kvmmmu_region_key *k = key;
	struct read_regions *r = ctx;
	const struct vm_epoch *v = vm_epoch(r, k);
	struct kvmmmu_region_key *ended;

	if (!v)
		return -ENOMEM;
	if (v->known && k->epoch >= v->epoch) {
		struct region_count c = region_count(r->fs, k, *(const __u64 *)value);

		c.epoch = 0;
		return r->live ? regions_add(r->live, &c) : 0;
	}
	/* taken out after the walk: a key deleted under it would restart it */
	ended = array_grow(r->ended, r->n_ended + 1, &r->cap_ended, sizeof(*ended));
	if (!ended)
		return -ENOMEM;
	r->ended = ended;
	r->ended[r->n_ended++] = *k;
	return 0;
}

/* Moves the ended epochs' counts out of the map, into the totals and the storms. */
static int take_ended(struct faults_source *fs, const struct read_regions *r)
{
	int fd = bpf_map__fd(fs->skel->maps.region_faults), err = 0;

	for (size_t i = 0; i < r->n_ended && !err; i++) {
		const struct kvmmmu_region_key *k = &r->ended[i];
		struct region_count c;
		__u64 faults;

		/* atomic where the kernel can (5.14): a fault late in its epoch is not lost */
		if (bpf_map_lookup_and_delete_elem(fd, k, &faults)) {
			if (errno == ENOENT || bpf_map_lookup_elem(fd, k, &faults))
				continue;
			bpf_map_delete_elem(fd, k);
		}
		c = region_count(fs, k, faults);
		err = regions_add(&fs->storms, &c);
		c.epoch = 0;
		if (!err)
			err = regions_add(&fs->regions_done, &c);
	}
	regions_merge(&fs->storms);
	regions_merge(&fs->regions_done);
	return err;
}

/* Takes the ended epochs out of the map; with LIVE, the epochs in progress into it. */
static int walk_regions(struct faults_source *fs, struct regions *live)
{
	struct read_regions r = {
		.fs = fs, .live = live, .births_fd = bpf_map__fd(fs->skel->maps.vm_births)};
	int err;

	err = map_each(bpf_map__fd(fs->skel->maps.region_faults), sizeof(struct kvmmmu_region_key),
		       sizeof(__u64), read_region, &r);
	if (!err)
		err = take_ended(fs, &r);
	free(r.ended);
	free(r.vms);
	return err;
}

int faults_source_read_regions(struct faults_source *fs, struct regions *out)
{
	int err;

	out->size = fs->opts->region_shift ? 1ULL << fs->opts->region_shift : 0;
	if (!fs->opts->region_shift)
		return 0;
	err = walk_regions(fs, out);
	if (!err)
		err = regions_add_all(out, &fs->regions_done);
	regions_merge(out);
	return err;
}

int faults_source_fold_regions(struct faults_source *fs)
{
	return fs->opts->region_shift ? walk_regions(fs, NULL) : 0;
}

struct storm_of {
	int pid, vm_index;
	__u32 epoch;
};

/*
 * Two events of one VM rarely race (both may carry the later epoch, or
 * reach user space in the other order): an epoch this far behind the one
 * taken has lost its event.
 */
#define STORM_REORDER 16

/* Keeps the storms of other VMs, and this VM's that may still find their event. */
static bool storm_pending(const struct region_count *c, void *ctx)
{
	const struct storm_of *s = ctx;

	return c->pid != s->pid || c->vm_index != s->vm_index ||
	       (c->epoch != s->epoch && c->epoch + STORM_REORDER >= s->epoch);
}

/* T's storm: the regions of its VM's epoch before it, the most faulted first. */
static void take_storm(struct faults_source *fs, struct timeline_event *t)
{
	struct storm_of of = {(int)t->ev.tgid, t->vm_index, t->ev.epoch - 1};
	const struct regions *r = &fs->storms;

	t->storm_known = true;
	for (size_t i = 0; i < r->n; i++) {
		const struct region_count *c = &r->items[i];
		size_t at;

		if (c->pid != of.pid || c->vm_index != of.vm_index || c->epoch != of.epoch)
			continue;
		t->storm_faults += c->faults;
		/* insertion into the few kept, most faults first */
		for (at = t->n_storm; at > 0 && t->storm[at - 1].faults < c->faults; at--)
			if (at < TIMELINE_STORM_REGIONS)
				t->storm[at] = t->storm[at - 1];
		if (at < TIMELINE_STORM_REGIONS) {
			t->storm[at] = (struct storm_region){c->base, c->faults, c->slot};
			if (t->n_storm < TIMELINE_STORM_REGIONS)
				t->n_storm++;
		}
	}
	/* taken; and much older ones are of events lost (the ring buffer was full) */
	regions_filter(&fs->storms, storm_pending, &of);
}

void faults_source_take_storms(struct faults_source *fs, struct timeline *t, size_t from)
{
	if (!fs->opts->region_shift)
		return;
	for (size_t i = from; i < t->n; i++)
		if (t->events[i].ev.epoch && !t->events[i].storm_known)
			take_storm(fs, &t->events[i]);
}

static bool other_pid(const struct region_count *c, void *ctx)
{
	return c->pid != *(const int *)ctx;
}

void faults_source_forget_regions(struct faults_source *fs, int pid)
{
	int fd = bpf_map__fd(fs->skel->maps.region_faults);
	struct kvmmmu_region_key k, next;
	bool more;

	if (!fs->opts->region_shift)
		return;
	/* its regions were reported; a long run's map must not fill */
	for (more = !bpf_map_get_next_key(fd, NULL, &k); more; k = next) {
		more = !bpf_map_get_next_key(fd, &k, &next);
		if ((int)k.tgid == pid)
			bpf_map_delete_elem(fd, &k);
	}
	regions_filter(&fs->regions_done, other_pid, &pid);
	regions_filter(&fs->storms, other_pid, &pid);
}
