/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A synthetic fleet snapshot for the exporter's rendering: VMS VMs of VCPUS
 * vCPUs each (and a VMM thread that faults outside any vCPU), every fault
 * histogram available and filled, every path x outcome cell counted, KVM's
 * binary statistics for each VM and vCPU as an x86 6.x kernel names them
 * (parsed by kvm_stats_parse() from a stats blob built here), dirty-log
 * toggles in a prom_state. Deterministic: the same arguments give the same
 * snapshot, so its rendering can be compared byte for byte
 * (tests/tools/prombench.c, tests/unit/test_prom_fleet.c).
 */
#ifndef KVMMMU_PROMFLEET_H
#define KVMMMU_PROMFLEET_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kvm.h>

#include "render_prom.h"

struct fleet_stat {
	const char *name;
	uint32_t flags;
	int16_t exponent;
	uint16_t size;
};

#define FS_COUNT (KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_UNIT_NONE | KVM_STATS_BASE_POW10)
#define FS_NS (KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_UNIT_SECONDS | KVM_STATS_BASE_POW10)
#define FS_INSTANT (KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_NONE | KVM_STATS_BASE_POW10)
#define FS_BOOL (KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_BOOLEAN | KVM_STATS_BASE_POW10)
#define FS_PEAK (KVM_STATS_TYPE_PEAK | KVM_STATS_UNIT_NONE | KVM_STATS_BASE_POW10)
#define FS_HIST (KVM_STATS_TYPE_LOG_HIST | KVM_STATS_UNIT_SECONDS | KVM_STATS_BASE_POW10)

/* An x86 VM's statistics (the generic ones, then x86's), as KVM_GET_STATS_FD lists them. */
static const struct fleet_stat fleet_vm_stats[] = {
	{"remote_tlb_flush", FS_COUNT, 0, 1},
	{"remote_tlb_flush_requests", FS_COUNT, 0, 1},
	{"mmu_shadow_zapped", FS_COUNT, 0, 1},
	{"mmu_pte_write", FS_COUNT, 0, 1},
	{"mmu_pde_zapped", FS_COUNT, 0, 1},
	{"mmu_flooded", FS_COUNT, 0, 1},
	{"mmu_recycled", FS_COUNT, 0, 1},
	{"mmu_cache_miss", FS_COUNT, 0, 1},
	{"mmu_unsync", FS_INSTANT, 0, 1},
	{"pages_4k", FS_INSTANT, 0, 1},
	{"pages_2m", FS_INSTANT, 0, 1},
	{"pages_1g", FS_INSTANT, 0, 1},
	{"nx_lpage_splits", FS_INSTANT, 0, 1},
	{"max_mmu_rmap_size", FS_PEAK, 0, 1},
	{"max_mmu_page_hash_collisions", FS_PEAK, 0, 1},
};

/* An x86 vCPU's: generic (halt polling, with its three histograms), then x86's. */
static const struct fleet_stat fleet_vcpu_stats[] = {
	{"halt_successful_poll", FS_COUNT, 0, 1},
	{"halt_attempted_poll", FS_COUNT, 0, 1},
	{"halt_poll_invalid", FS_COUNT, 0, 1},
	{"halt_wakeup", FS_COUNT, 0, 1},
	{"halt_poll_success_ns", FS_NS, -9, 1},
	{"halt_poll_fail_ns", FS_NS, -9, 1},
	{"halt_wait_ns", FS_NS, -9, 1},
	{"halt_poll_success_hist", FS_HIST, -9, 32},
	{"halt_poll_fail_hist", FS_HIST, -9, 32},
	{"halt_wait_hist", FS_HIST, -9, 32},
	{"blocking", FS_BOOL, 0, 1},
	{"pf_taken", FS_COUNT, 0, 1},
	{"pf_fixed", FS_COUNT, 0, 1},
	{"pf_emulate", FS_COUNT, 0, 1},
	{"pf_spurious", FS_COUNT, 0, 1},
	{"pf_fast", FS_COUNT, 0, 1},
	{"pf_mmio_spte_created", FS_COUNT, 0, 1},
	{"pf_guest", FS_COUNT, 0, 1},
	{"tlb_flush", FS_COUNT, 0, 1},
	{"invlpg", FS_COUNT, 0, 1},
	{"exits", FS_COUNT, 0, 1},
	{"io_exits", FS_COUNT, 0, 1},
	{"mmio_exits", FS_COUNT, 0, 1},
	{"signal_exits", FS_COUNT, 0, 1},
	{"irq_window_exits", FS_COUNT, 0, 1},
	{"nmi_window_exits", FS_COUNT, 0, 1},
	{"l1d_flush", FS_COUNT, 0, 1},
	{"halt_exits", FS_COUNT, 0, 1},
	{"request_irq_exits", FS_COUNT, 0, 1},
	{"irq_exits", FS_COUNT, 0, 1},
	{"host_state_reload", FS_COUNT, 0, 1},
	{"fpu_reload", FS_COUNT, 0, 1},
	{"insn_emulation", FS_COUNT, 0, 1},
	{"insn_emulation_fail", FS_COUNT, 0, 1},
	{"hypercalls", FS_COUNT, 0, 1},
	{"irq_injections", FS_COUNT, 0, 1},
	{"nmi_injections", FS_COUNT, 0, 1},
	{"req_event", FS_COUNT, 0, 1},
	{"nested_run", FS_COUNT, 0, 1},
	{"directed_yield_attempted", FS_COUNT, 0, 1},
	{"directed_yield_successful", FS_COUNT, 0, 1},
	{"preemption_reported", FS_COUNT, 0, 1},
	{"preemption_other", FS_COUNT, 0, 1},
	{"guest_mode", FS_BOOL, 0, 1},
	{"notify_window_exits", FS_COUNT, 0, 1},
};

/* A fixed-seed generator (xorshift64): the same fleet every run. */
static inline uint64_t fleet_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * A stats file's header, id and descriptors as KVM lays them out (name_size
 * bytes a name), parsed into S, its values then drawn from *SEED. 0 or -errno.
 */
static inline int fleet_kvm_stats(struct kvm_stats *s, const char *id,
				  const struct fleet_stat *stats, size_t n, uint64_t *seed)
{
	const uint32_t name_size = 48;
	size_t desc_len = sizeof(struct kvm_stats_desc) + name_size;
	size_t len = sizeof(struct kvm_stats_header) + name_size + n * desc_len;
	struct kvm_stats_header *h = calloc(1, len);
	uint32_t offset = 0;
	int err;

	if (!h)
		return -1;
	h->name_size = name_size;
	h->num_desc = (uint32_t)n;
	h->id_offset = sizeof(*h);
	h->desc_offset = h->id_offset + name_size;
	h->data_offset = (uint32_t)len;
	snprintf((char *)h + h->id_offset, name_size, "%s", id);
	for (size_t i = 0; i < n; i++) {
		struct kvm_stats_desc *d = (void *)((char *)h + h->desc_offset + i * desc_len);

		d->flags = stats[i].flags;
		d->exponent = stats[i].exponent;
		d->size = stats[i].size;
		d->offset = offset;
		snprintf(d->name, name_size, "%s", stats[i].name);
		offset += stats[i].size * sizeof(uint64_t);
	}
	err = kvm_stats_parse(s, h, len);
	free(h);
	for (size_t i = 0; !err && i < s->n_values; i++)
		s->values[i] = fleet_rand(seed) % 100000000;
	return err;
}

/* Values when tracing started (a quarter of today's): the exporter came after the VMs. */
static inline uint64_t *fleet_baseline(const struct kvm_stats *s)
{
	uint64_t *b = kvm_stats_values_dup(s);

	for (size_t i = 0; b && i < s->n_values; i++)
		b[i] /= 4;
	return b;
}

/* A histogram of N faults around MEAN ns, spread over a few decades as real ones are. */
static inline void fleet_hist(struct kvmmmu_hist *h, uint64_t n, uint64_t mean, uint64_t *seed)
{
	for (uint64_t k = 0; k < 64 && n; k++) {
		uint64_t part = k == 63 ? n : n / 4 + 1, ns;

		part = part > n ? n : part;
		ns = mean / 8 + fleet_rand(seed) % (mean * (1 + k % 5));
		h->slots[kvmmmu_hist_slot(ns)] += part;
		h->count += part;
		h->sum_ns += part * ns;
		if (ns > h->max_ns)
			h->max_ns = ns;
		n -= part;
	}
}

static inline void fleet_figures(struct figures *f, uint64_t *seed)
{
	uint64_t faults = 100000 + fleet_rand(seed) % 900000;

	for (int k = 0; k < KVMMMU_N_COUNTERS; k++)
		f->counters[k] = fleet_rand(seed) % faults;
	f->counters[KVMMMU_FAULTS] = faults;
	for (int r = 0; r < 7; r++)
		for (int p = 0; p < KVMMMU_N_FAULT_PATHS; p++) {
			f->outcomes[p][r] = fleet_rand(seed) % (faults / 8);
			f->ret_pf[r] += f->outcomes[p][r];
		}
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		fleet_hist(&f->hist[h], faults, 1000 << (h % 6), seed);
	for (int m = 0; m < KVMMMU_LOCK_MODES; m++) {
		fleet_hist(&f->lock_wait[m], faults / 4, 3000, seed);
		f->lock_other_waits[m] = fleet_rand(seed) % 10000;
		f->lock_other_wait_ns[m] = fleet_rand(seed) % 1000000000;
	}
	for (int k = 0; k < KVMMMU_N_MMU_COUNTERS; k++)
		f->mmu[k] = fleet_rand(seed) % 100000;
	for (int k = 0; k < N_MMU_TIMES; k++)
		f->mmu_ns[k] = fleet_rand(seed) % 10000000000ULL;
}

/*
 * SNAP and ST: a fleet of VMS x VCPUS as a scrape of the exporter sees it.
 * ODD_NAMES gives one VM a name with every character a label escapes. 0 or -1.
 */
static inline int fleet_build(struct snapshot *snap, struct prom_state *st, int vms, int vcpus,
			      int odd_names)
{
	static const char *const ret_pf[] = {"continue", "retry", "emulate", "write_protected",
					     "invalid",	 "fixed", "spurious"};
	static const char *const probes[] = {"kvm_mmu_page_fault", "kvm_tdp_page_fault",
					     "kvm_vcpu_gfn_to_memslot", "kvm_mmu_faultin_pfn",
					     "kvm_mmu_load"};
	static const char *const tps[] = {"kvm_page_fault", "kvm_mmu_spte_requested",
					  "kvm_mmu_set_spte", "kvm_mmu_pagetable_walk"};
	static char names[64][96];
	struct timeline_event *ev;
	uint64_t seed = 88172645463325252ULL;
	size_t n_ev = 0;

	memset(snap, 0, sizeof(*snap));
	memset(st, 0, sizeof(*st));
	if (vms > 64)
		return -1;
	for (size_t r = 0; r < sizeof(ret_pf) / sizeof(ret_pf[0]); r++)
		snap->ret_pf.name[r] = strdup(ret_pf[r]);
	snap->ret_pf.name[KVMMMU_RET_PF_ERROR] = strdup("error");
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		snap->hist_available[h] = true;
	snap->func_mode = true;
	snap->lock_ok = snap->events_ok = true;
	snap->sample_every = 1;
	snap->n_probes = sizeof(probes) / sizeof(probes[0]) + sizeof(tps) / sizeof(tps[0]);
	snap->n_collector_probes = snap->n_probes;
	snap->probes = calloc(snap->n_probes, sizeof(*snap->probes));
	snap->kvm = calloc(vms ? vms : 1, sizeof(*snap->kvm));
	ev = calloc(vms ? 2 * vms : 1, sizeof(*ev));
	if (!snap->probes || !snap->kvm || !ev)
		return -1;
	for (size_t i = 0; i < snap->n_probes; i++) {
		struct probe_status *p = &snap->probes[i];
		size_t nf = sizeof(probes) / sizeof(probes[0]);

		p->wanted = true;
		p->name = i < nf ? probes[i] : tps[i - nf];
		p->group = i < nf ? NULL : "kvm";
		p->kind = i < nf ? ATTACH_FENTRY : ATTACH_TP_BTF;
	}
	for (int i = 0; i < vms; i++) {
		int pid = 4000 + 97 * i;
		struct vm_row *vm = model_vm(&snap->m, pid, 1);
		struct vm_stats *v = &snap->kvm[snap->n_kvm++];
		char id[48];

		if (!vm)
			return -1;
		snprintf(vm->comm, sizeof(vm->comm), "%s",
			 i % 4 == 3 ? "cloud-hyperviso" : "qemu-kvm");
		if (odd_names && i == 1)
			snprintf(names[i], sizeof(names[i]), "tenant-%d/say \"hi\"\\\nnow", i);
		else
			snprintf(names[i], sizeof(names[i]), "tenant-%d/vm-%02d", i % 3, i);
		vm->name = names[i];
		snprintf(vm->namespace, sizeof(vm->namespace), "tenant-%d", i % 3);
		for (int c = -1; c < vcpus; c++) {
			struct vcpu_row *row = model_row(vm, c, pid + 2 + c);

			if (!row)
				return -1;
			snprintf(row->comm, sizeof(row->comm), c < 0 ? "qemu-kvm" : "CPU %d/KVM",
				 c);
			fleet_figures(&row->f, &seed);
			figures_add(&vm->total, &row->f);
		}
		v->pid = pid;
		v->have_vm = true;
		snprintf(id, sizeof(id), "kvm-%d", pid);
		if (fleet_kvm_stats(&v->vm, id, fleet_vm_stats,
				    sizeof(fleet_vm_stats) / sizeof(fleet_vm_stats[0]), &seed) ||
		    !(v->vm_baseline = fleet_baseline(&v->vm)))
			return -1;
		v->vcpus = calloc(vcpus ? vcpus : 1, sizeof(*v->vcpus));
		if (!v->vcpus)
			return -1;
		for (int c = 0; c < vcpus; c++, v->n_vcpus++) {
			snprintf(id, sizeof(id), "kvm-%d/vcpu_%d", pid, c);
			v->vcpus[c].vcpu = c;
			if (fleet_kvm_stats(&v->vcpus[c].stats, id, fleet_vcpu_stats,
					    sizeof(fleet_vcpu_stats) / sizeof(fleet_vcpu_stats[0]),
					    &seed) ||
			    !(v->vcpus[c].baseline = fleet_baseline(&v->vcpus[c].stats)))
				return -1;
		}
		for (int k = 0; k < 2; k++, n_ev++) {
			ev[n_ev].ev.tgid = (uint32_t)pid;
			ev[n_ev].ev.kind = k ? KVMMMU_EV_DIRTY_LOG_OFF : KVMMMU_EV_DIRTY_LOG_ON;
			ev[n_ev].ev.duration_ns = 1000000 + fleet_rand(&seed) % 1000000000;
			ev[n_ev].vm_index = 1;
		}
	}
	model_sort(&snap->m);
	/* the toggles came in earlier scrapes: this one has no new event, as most do */
	snap->timeline = ev;
	snap->n_timeline = n_ev;
	if (prom_state_update(st, snap))
		return -1;
	snap->timeline_new = n_ev;
	return 0;
}

#endif
