// SPDX-License-Identifier: GPL-2.0
/*
 * KVM's own statistics of each VM as families: kvmmmu_kvm_stat_NAME_total
 * for counters, kvmmmu_kvm_stat_NAME for instant values and peaks, times in
 * seconds; the VM's statistics and its vCPUs' summed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <linux/kvm.h>

#include "render_prom.h"

/* Whether NAME (of TYPE) already had a family: the VM's and the vCPUs' names can meet. */
static bool kvm_seen(char seen[][96], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(seen[i], name))
			return true;
	return false;
}

#define KVM_MAX_FAMILIES 160

/* One of KVM's statistics (descriptor D) as a family, for every VM that has it. */
static void kvm_family(struct prom_writer *w, const struct snapshot *s, const char *const *vm,
		       const struct kvm_stat_desc_info *d, bool vcpu)
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
		const struct vm_stats *v = snapshot_vm_kvm(s, &s->m.vms[i]);
		struct prom_label l[] = {{"vm", vm[i]}};
		uint64_t value;

		if (!v || (vcpu ? vm_stats_sum(v, d->name, &value)
				: vm_stats_get(v, -1, d->name, &value)))
			continue;
		if (seconds)
			prom_double(w, l, 1, (double)value * scale);
		else
			prom_u64(w, l, 1, value);
	}
}

void render_prom_kvm_stats(struct prom_writer *w, const struct snapshot *s, const char *const *vm)
{
	char seen[KVM_MAX_FAMILIES][96]; /* names: the VM's and vCPUs' may overlap */
	size_t n_seen = 0;

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

				if (d->size != 1 || n_seen == KVM_MAX_FAMILIES ||
				    kvm_seen(seen, n_seen, d->name) || strlen(d->name) >= 96)
					continue; /* histograms: not here */
				snprintf(seen[n_seen++], sizeof(seen[0]), "%s", d->name);
				kvm_family(w, s, vm, d, k == 1 || v->vcpu_sums);
			}
	}
}
