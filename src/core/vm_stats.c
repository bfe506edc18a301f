// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kvm.h>

#include "vm_stats.h"

static int get(const struct vm_stats *v, int vcpu, const char *name, bool since_mark,
	       uint64_t *value)
{
	const struct kvm_stats *s = NULL;
	const uint64_t *base = NULL;
	const struct kvm_stat_desc_info *d;

	if (v->stale)
		return -ESTALE;
	if (vcpu < 0 && v->have_vm) {
		s = &v->vm;
		base = since_mark && v->vm_mark ? v->vm_mark : v->vm_baseline;
	}
	for (size_t i = 0; vcpu >= 0 && i < v->n_vcpus; i++) {
		if (v->vcpus[i].vcpu == vcpu) {
			s = &v->vcpus[i].stats;
			base = since_mark && v->vcpus[i].mark ? v->vcpus[i].mark
							      : v->vcpus[i].baseline;
		}
	}
	if (!s || !(d = kvm_stats_find(s, name)))
		return -ENOENT;
	*value = s->values[d->value_index];
	/* counters start at the baseline; instant and peak values are what they are */
	if (base && (d->flags & KVM_STATS_TYPE_MASK) == KVM_STATS_TYPE_CUMULATIVE)
		*value -= base[d->value_index];
	return 0;
}

static int sum(const struct vm_stats *v, const char *name, bool since_mark, uint64_t *value)
{
	int err = -ENOENT;

	if (v->vcpu_sums) /* KVM summed them */
		return get(v, -1, name, since_mark, value);
	*value = 0;
	for (size_t i = 0; i < v->n_vcpus; i++) {
		uint64_t one;

		if (!get(v, v->vcpus[i].vcpu, name, since_mark, &one)) {
			*value += one;
			err = 0;
		}
	}
	return err;
}

int vm_stats_get(const struct vm_stats *v, int vcpu, const char *name, uint64_t *value)
{
	return get(v, vcpu, name, false, value);
}

int vm_stats_sum(const struct vm_stats *v, const char *name, uint64_t *value)
{
	return sum(v, name, false, value);
}

int vm_stats_get_since_mark(const struct vm_stats *v, int vcpu, const char *name, uint64_t *value)
{
	return get(v, vcpu, name, true, value);
}

int vm_stats_sum_since_mark(const struct vm_stats *v, const char *name, uint64_t *value)
{
	return sum(v, name, true, value);
}

void vm_stats_mark(struct vm_stats *v)
{
	if (v->have_vm) {
		free(v->vm_mark);
		v->vm_mark = kvm_stats_values_dup(&v->vm);
	}
	for (size_t i = 0; i < v->n_vcpus; i++) {
		free(v->vcpus[i].mark);
		v->vcpus[i].mark = kvm_stats_values_dup(&v->vcpus[i].stats);
	}
}

void vm_stats_missed(struct vm_stats *v, int pid)
{
	memset(v, 0, sizeof(*v));
	v->vm.fd = -1;
	v->pid = pid;
	v->missed = true;
	v->frozen = true;
}

size_t vm_stats_fds(const struct vm_stats *v)
{
	return v->frozen ? 0 : (v->have_vm ? 1 : 0) + v->n_vcpus;
}

static uint64_t *dup_values(const uint64_t *v, size_t n, bool *failed)
{
	uint64_t *d;

	if (!v)
		return NULL;
	d = malloc((n ? n : 1) * sizeof(*d));
	if (!d) {
		*failed = true;
		return NULL;
	}
	memcpy(d, v, n * sizeof(*d));
	return d;
}

int vm_stats_copy(struct vm_stats *dst, const struct vm_stats *src)
{
	bool failed = false;

	*dst = *src;
	dst->vm = (struct kvm_stats){.fd = -1};
	dst->vcpus = NULL;
	dst->n_vcpus = 0;
	dst->vm_baseline = dst->vm_mark = NULL;
	dst->frozen = true; /* no fds: nothing to refresh */
	if (src->have_vm) {
		failed = kvm_stats_copy(&dst->vm, &src->vm) != 0;
		dst->vm_baseline = dup_values(src->vm_baseline, src->vm.n_values, &failed);
		dst->vm_mark = dup_values(src->vm_mark, src->vm.n_values, &failed);
	}
	dst->vcpus = calloc(src->n_vcpus ? src->n_vcpus : 1, sizeof(*dst->vcpus));
	failed |= !dst->vcpus;
	for (size_t i = 0; !failed && i < src->n_vcpus; i++, dst->n_vcpus++) {
		const struct vcpu_stats *s = &src->vcpus[i];
		struct vcpu_stats *d = &dst->vcpus[i];

		d->vcpu = s->vcpu;
		failed = kvm_stats_copy(&d->stats, &s->stats) != 0;
		d->baseline = dup_values(s->baseline, s->stats.n_values, &failed);
		d->mark = dup_values(s->mark, s->stats.n_values, &failed);
	}
	if (failed) {
		vm_stats_close(dst);
		return -ENOMEM;
	}
	return 0;
}

void vm_stats_close(struct vm_stats *v)
{
	if (v->have_vm)
		kvm_stats_close(&v->vm);
	for (size_t i = 0; i < v->n_vcpus; i++) {
		kvm_stats_close(&v->vcpus[i].stats);
		free(v->vcpus[i].baseline);
		free(v->vcpus[i].mark);
	}
	free(v->vcpus);
	free(v->vm_baseline);
	free(v->vm_mark);
	memset(v, 0, sizeof(*v));
}
