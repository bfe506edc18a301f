// SPDX-License-Identifier: GPL-2.0
/*
 * KVM's own statistics of each VM as families: kvmmmu_kvm_stat_NAME_total
 * for counters, kvmmmu_kvm_stat_NAME for instant values and peaks, times in
 * seconds; the VM's statistics and its vCPUs' summed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kvm.h>

#include "hash.h"
#include "render_prom.h"

#define KVM_MAX_FAMILIES 160
#define KVM_SEEN_SLOTS 512 /* over three times KVM_MAX_FAMILIES: probes stay short */

/* The statistics that have had a family: the VM's and the vCPUs' names can meet. */
struct kvm_seen {
	const char *name[KVM_SEEN_SLOTS]; /* by hash; NULL: free */
	size_t n;
};

/* Whether NAME already had a family; if not, it has now. */
static bool kvm_seen(struct kvm_seen *seen, const char *name)
{
	size_t i = hash_str(HASH_INIT, name) % KVM_SEEN_SLOTS;

	for (; seen->name[i]; i = (i + 1) % KVM_SEEN_SLOTS)
		if (!strcmp(seen->name[i], name))
			return true;
	seen->name[i] = name;
	seen->n++;
	return false;
}

/*
 * Statistic *NAME of S since BASE (counters; other values are what they are),
 * as vm_stats_get() gives it. Looked up at HINT first: VMs and vCPUs of one
 * kernel list their statistics in the same order, so this saves a search by
 * name each VM and vCPU. *NAME becomes S's own name string: a VM's vCPUs share
 * theirs, so for the next vCPU the test is one of pointers, not a strcmp().
 * False when S has no such statistic.
 */
static bool kvm_value(const struct kvm_stats *s, const uint64_t *base, size_t hint,
		      const char **name, uint64_t *value)
{
	const struct kvm_stat_desc_info *d =
		hint < s->n_desc &&
				(s->desc[hint].name == *name || !strcmp(s->desc[hint].name, *name))
			? &s->desc[hint]
			: kvm_stats_find(s, *name);

	if (!d)
		return false;
	*name = d->name;
	*value = s->values[d->value_index];
	if (base && (d->flags & KVM_STATS_TYPE_MASK) == KVM_STATS_TYPE_CUMULATIVE)
		*value -= base[d->value_index];
	return true;
}

/* NAME of V's VM, or (VCPU) summed over its vCPUs, as vm_stats_get() and _sum() give them. */
static bool vm_value(const struct vm_stats *v, bool vcpu, size_t hint, const char *name,
		     uint64_t *value)
{
	bool any = false;

	if (v->stale) /* what was read before is not its count */
		return false;
	if (!vcpu || v->vcpu_sums) /* KVM summed them */
		return v->have_vm && kvm_value(&v->vm, v->vm_baseline, hint, &name, value);
	*value = 0;
	for (size_t i = 0; i < v->n_vcpus; i++) {
		uint64_t one;

		if (kvm_value(&v->vcpus[i].stats, v->vcpus[i].baseline, hint, &name, &one)) {
			*value += one;
			any = true;
		}
	}
	return any;
}

/*
 * One of KVM's statistics (descriptor D, at HINT in its set) as a family,
 * for every VM that has it; KVM[i]: VM i's statistics (NULL: none).
 */
static void kvm_family(struct prom_writer *w, const struct snapshot *s, const char *const *vm,
		       const struct vm_stats *const *kvm, const struct kvm_stat_desc_info *d,
		       size_t hint, bool vcpu)
{
	uint32_t type = d->flags & KVM_STATS_TYPE_MASK;
	bool counter = type == KVM_STATS_TYPE_CUMULATIVE;
	bool seconds = (d->flags & KVM_STATS_UNIT_MASK) == KVM_STATS_UNIT_SECONDS;
	double scale = seconds ? pow(10, d->exponent) : 1;
	char name[160], help[200];
	size_t len = strlen(d->name);

	if (seconds && len > 3 && !strcmp(d->name + len - 3, "_ns"))
		len -= 3;
	snprintf(name, sizeof(name), "kvmmmu_kvm_stat_%.*s%s%s", (int)len, d->name,
		 seconds ? "_seconds" : "", counter ? "_total" : "");
	snprintf(help, sizeof(help), "KVM's %s statistic %s%s", kvm_stats_type_name(d->flags),
		 d->name, vcpu ? ", the VM's vCPUs summed" : "");
	prom_family(w, name, counter ? PROM_COUNTER : PROM_GAUGE, help);
	for (size_t i = 0; i < s->m.n_vms; i++) {
		struct prom_label l[] = {{"vm", vm[i]}};
		uint64_t value;

		if (!kvm[i] || !vm_value(kvm[i], vcpu, hint, d->name, &value))
			continue;
		if (seconds)
			prom_double(w, l, 1, (double)value * scale);
		else
			prom_u64(w, l, 1, value);
	}
}

void render_prom_kvm_stats(struct prom_writer *w, const struct snapshot *s, const char *const *vm)
{
	const struct vm_stats **kvm = calloc(s->m.n_vms ? s->m.n_vms : 1, sizeof(*kvm));
	struct kvm_seen *seen = calloc(1, sizeof(*seen));

	if (!kvm || !seen) {
		if (!w->err)
			w->err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->m.n_vms; i++)
		kvm[i] = snapshot_vm_kvm(s, &s->m.vms[i]);
	/* every statistic any VM has: VMs of one kernel have the same set */
	for (size_t i = 0; i < s->n_kvm; i++) {
		const struct vm_stats *v = &s->kvm[i];
		const struct kvm_stats *sets[2] = {v->have_vm ? &v->vm : NULL,
						   v->n_vcpus && !v->vcpu_sums ? &v->vcpus[0].stats
									       : NULL};

		if (!model_process_vms(&s->m, v->pid))
			continue;
		for (int k = 0; k < 2; k++)
			for (size_t j = 0; sets[k] && j < sets[k]->n_desc; j++) {
				const struct kvm_stat_desc_info *d = &sets[k]->desc[j];

				if (d->size != 1 || seen->n == KVM_MAX_FAMILIES ||
				    strlen(d->name) >= 96 || kvm_seen(seen, d->name))
					continue; /* histograms: not here */
				kvm_family(w, s, vm, kvm, d, j, k == 1 || v->vcpu_sums);
			}
	}
out:
	free(kvm);
	free(seen);
}
