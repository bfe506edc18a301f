// SPDX-License-Identifier: GPL-2.0
/*
 * bpfscenarios' cases whose faults sit in kernel memory (main() is in
 * bpfscenarios.c).
 *
 * prefetch/, tdp/, error/: events whose struct kvm_page_fault and SPTE sit in
 * kernel memory (tests/tools/kcell.bpf.c), laid out as the running kernel's
 * BTF says. A prefetch (an async-PF completion) is no fault KVM takes, only
 * its fix counts; a TDP MMU write fault on a write-protected page is
 * WRITE_PROTECTED even when its SPTE did not change; a huge leaf installed
 * over a page table is fixed, whatever the 512 frozen children traced after
 * it; a negative return is the "error" outcome, not a bad RET_PF value.
 *
 * emulate/: an emulation after a page-fault exit whose fault requested no
 * SPTE is that fault's RET_PF_EMULATE only if it is of the same exit (the
 * vCPU's stat.exits, in a cell laid out as struct kvm_vcpu): one of a later
 * exit shows the fault was retried.
 */
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kvmmmu.h"
#include "kernel_btf.h"
#include "faults.skel.h"
#include "kcell.h"
#include "kcell.skel.h"
#include "bpfscenarios.h"

/* Kernel memory the faults object reads as a struct kvm_page_fault, and an SPTE after it. */
struct kmem {
	struct kcell_bpf *skel;
	__u64 addr;					   /* the cell's kernel address */
	int off_addr, off_write, off_is_tdp, off_prefetch; /* this kernel's layout, in bytes */
	int off_exits;					   /* struct kvm_vcpu's stat.exits */
};
#define KMEM_SPTE 256 /* where the SPTE sits in the cell */

static int member_offset(const struct btf *btf, const struct btf_type *t, const char *name)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), name))
			return (int)(btf_member_bit_offset(t, i) / 8);
	return -1;
}

static int kmem_open(struct kmem *k)
{
	struct kernel_btf kb = {0};
	const struct btf_type *t;
	struct btf *btf;
	__u64 arg = 0;
	int id;

	memset(k, 0, sizeof(*k));
	if (kernel_btf_load(&kb) || !(btf = kernel_btf_kvm_types(&kb)) ||
	    (id = btf__find_by_name_kind(btf, "kvm_page_fault", BTF_KIND_STRUCT)) < 0) {
		fprintf(stderr, "bpfscenarios: no struct kvm_page_fault in the kernel's BTF\n");
		kernel_btf_free(&kb);
		return -1;
	}
	t = btf__type_by_id(btf, id);
	k->off_addr = member_offset(btf, t, "addr");
	k->off_write = member_offset(btf, t, "write");
	k->off_is_tdp = member_offset(btf, t, "is_tdp");
	k->off_prefetch = member_offset(btf, t, "prefetch");
	k->off_exits = -1;
	id = btf__find_by_name_kind(btf, "kvm_vcpu", BTF_KIND_STRUCT);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	if (t && member_offset(btf, t, "stat") >= 0) {
		int stat = member_offset(btf, t, "stat");
		const struct btf_member *m = btf_members(t);

		for (int i = 0; i < btf_vlen(t); i++)
			if (!strcmp(btf__name_by_offset(btf, m[i].name_off), "stat")) {
				const struct btf_type *st = btf__type_by_id(btf, m[i].type);
				int exits = st ? member_offset(btf, st, "exits") : -1;

				k->off_exits = exits < 0 ? -1 : stat + exits;
			}
	}
	kernel_btf_free(&kb);
	if (k->off_exits < 0 || k->off_exits + 8 > (int)sizeof(struct kcell)) {
		fprintf(stderr, "bpfscenarios: struct kvm_vcpu's stat.exits is not where a cell "
				"reaches\n");
		return -1;
	}
	if (k->off_addr < 0 || k->off_write < 0 || k->off_is_tdp < 0 || k->off_prefetch < 0 ||
	    k->off_prefetch >= KMEM_SPTE || k->off_is_tdp >= KMEM_SPTE) {
		fprintf(stderr,
			"bpfscenarios: struct kvm_page_fault lacks a member the tests set\n");
		return -1;
	}
	k->skel = kcell_bpf__open_and_load();
	if (!k->skel || run_args(k->skel->progs.where, &arg, 1) || !k->skel->bss->cell_addr) {
		fprintf(stderr, "bpfscenarios: no kernel memory cell (needs CAP_PERFMON)\n");
		kcell_bpf__destroy(k->skel);
		return -1;
	}
	k->addr = k->skel->bss->cell_addr;
	return 0;
}

/* The cell holds a fault at ADDR (its fields as given) and SPTE; returns the fault's address. */
static __u64 kmem_fault(struct kmem *k, __u64 addr, bool write, bool is_tdp, bool prefetch,
			__u64 spte)
{
	struct kcell cell = {0};
	__u32 zero = 0;

	memcpy(cell.bytes + k->off_addr, &addr, sizeof(addr));
	cell.bytes[k->off_write] = write;
	cell.bytes[k->off_is_tdp] = is_tdp;
	cell.bytes[k->off_prefetch] = prefetch;
	memcpy(cell.bytes + KMEM_SPTE, &spte, sizeof(spte));
	if (bpf_map__update_elem(k->skel->maps.cells, &zero, sizeof(zero), &cell, sizeof(cell), 0))
		return 0;
	return k->addr;
}

/* The cell holds a vCPU that has made EXITS VM exits; returns its address. */
static __u64 kmem_vcpu(struct kmem *k, __u64 exits)
{
	static struct kcell cell; /* 16 KiB: off the stack */
	__u32 zero = 0;

	memset(&cell, 0, sizeof(cell));
	memcpy(cell.bytes + k->off_exits, &exits, sizeof(exits));
	if (bpf_map__update_elem(k->skel->maps.cells, &zero, sizeof(zero), &cell, sizeof(cell), 0))
		return 0;
	return k->addr;
}

#define GFN 0x12340ULL
#define SPTE_PRESENT_RO 0x1ULL	     /* present, not writable */
#define SPTE_PAGE_TABLE 0x7ULL	     /* a non-leaf SPTE */
#define SPTE_HUGE_LEAF 0x80000087ULL /* a 2 MiB leaf */
#define FROZEN_6_1 0x5a0ULL
#define FROZEN_6_12 ((1ULL << 63) | 0x5a0ULL)

static int tdp_change(struct faults_bpf *skel, __u64 gfn, int level, __u64 old, __u64 new)
{
	__u64 args[5] = {0, gfn, (__u64)level, old, new};

	return run_args(skel->progs.kvm_tdp_mmu_spte_changed_raw, args, 5);
}

/* A fault requests its SPTE (FAULT: the struct's address), then the SPTE at SPTEP is set. */
static int request_and_set(struct faults_bpf *skel, __u64 fault, int level, __u64 gfn, __u64 sptep)
{
	return !fault || run3(skel->progs.kvm_mmu_spte_requested_raw, fault, 0, 0) ||
	       run3(skel->progs.kvm_mmu_set_spte_raw, (__u64)level, gfn, sptep);
}

/* A fresh faults object whose thread's VM uses the TDP MMU. */
static int setup_tdp(struct faults_bpf **skel)
{
	struct kvmmmu_fault_state tdp_vm = {.vm_mmu = 2};

	if (setup_faults(skel, 1))
		return -1;
	if (put_fault_state(bpf_map__fd((*skel)->maps.thread_stats), &tdp_vm)) {
		faults_bpf__destroy(*skel);
		return -1;
	}
	return 0;
}

int fault_scenarios(void)
{
	static struct kvmmmu_thread_stats s;
	struct faults_bpf *skel = NULL;
	__u64 fault, paths;
	struct kmem k;

	if (kmem_open(&k))
		return -1;

	/* an async-PF completion: a prefetch, fixed */
	if (setup_faults(&skel, 1) ||
	    request_and_set(skel, fault = kmem_fault(&k, GFN << 12, false, false, true, 0), 1, GFN,
			    0))
		goto err;
	thread_figures(skel, &s);
	paths = s.counters[KVMMMU_PATH_DIRECT] + s.counters[KVMMMU_PATH_SHADOW] +
		s.counters[KVMMMU_PATH_TDP_MMU];
	expectf("prefetch/async-pf-fix-counts-as-fixed-only",
		s.counters[KVMMMU_FAULTS] == 0 && s.ret_pf[RET_PF_FIXED] == 1 && paths == 0,
		"faults %llu, ret_pf_fixed %llu, on a path %llu",
		(unsigned long long)s.counters[KVMMMU_FAULTS],
		(unsigned long long)s.ret_pf[RET_PF_FIXED], (unsigned long long)paths);
	/* one that sets nothing (its SPTE was right) counts nothing at all */
	if (run3(skel->progs.kvm_mmu_spte_requested_raw, fault, 0, 0) ||
	    run3(skel->progs.kvm_userspace_exit_raw, 0, 0, 0))
		goto err;
	thread_figures(skel, &s);
	expectf("prefetch/unset-counts-nothing",
		s.counters[KVMMMU_FAULTS] == 0 && s.ret_pf[RET_PF_SPURIOUS] == 0,
		"faults %llu, ret_pf_spurious %llu", (unsigned long long)s.counters[KVMMMU_FAULTS],
		(unsigned long long)s.ret_pf[RET_PF_SPURIOUS]);
	faults_bpf__destroy(skel);

	/* a TDP MMU write fault whose read-only SPTE stays as it was: write-protected */
	if (setup_tdp(&skel) ||
	    request_and_set(skel, kmem_fault(&k, GFN << 12, true, true, false, SPTE_PRESENT_RO), 1,
			    GFN, k.addr + KMEM_SPTE))
		goto err;
	thread_figures(skel, &s);
	expectf("tdp/unchanged-write-protected-is-write-protected",
		s.ret_pf[RET_PF_EMULATE] == 1 && s.ret_pf[RET_PF_SPURIOUS] == 0,
		"write_protected %llu, spurious %llu", (unsigned long long)s.ret_pf[RET_PF_EMULATE],
		(unsigned long long)s.ret_pf[RET_PF_SPURIOUS]);
	/* ... and a read fault on it, unchanged, is spurious */
	if (request_and_set(skel, kmem_fault(&k, GFN << 12, false, true, false, SPTE_PRESENT_RO), 1,
			    GFN, k.addr + KMEM_SPTE))
		goto err;
	thread_figures(skel, &s);
	expectf("tdp/unchanged-read-is-spurious", s.ret_pf[RET_PF_SPURIOUS] == 1, "spurious %llu",
		(unsigned long long)s.ret_pf[RET_PF_SPURIOUS]);
	faults_bpf__destroy(skel);

	/* a 2 MiB leaf over a page table, whose 512 children are frozen after it */
	for (int v = 0; v < 2; v++) {
		__u64 frozen = v ? FROZEN_6_12 : FROZEN_6_1;

		if (setup_tdp(&skel) ||
		    !(fault = kmem_fault(&k, GFN << 12, false, true, false, 0)) ||
		    run3(skel->progs.kvm_mmu_spte_requested_raw, fault, 0, 0) ||
		    tdp_change(skel, GFN, 2, SPTE_PAGE_TABLE, SPTE_HUGE_LEAF))
			goto err;
		for (int i = 0; i < 512; i++)
			if (tdp_change(skel, GFN + i, 1, SPTE_PRESENT_RO, frozen))
				goto err;
		if (run3(skel->progs.kvm_mmu_set_spte_raw, 2, GFN, 0))
			goto err;
		thread_figures(skel, &s);
		expectf(v ? "tdp/huge-leaf-over-table-is-fixed-6.12"
			  : "tdp/huge-leaf-over-table-is-fixed-6.1",
			s.ret_pf[RET_PF_FIXED] == 1 && s.ret_pf[RET_PF_SPURIOUS] == 0,
			"fixed %llu, spurious %llu", (unsigned long long)s.ret_pf[RET_PF_FIXED],
			(unsigned long long)s.ret_pf[RET_PF_SPURIOUS]);
		faults_bpf__destroy(skel);
	}

	/*
	 * A page-fault exit whose fault requests no SPTE, then an emulation:
	 * of the same exit (the vCPU's exit count unchanged), RET_PF_EMULATE;
	 * of a later one (an I/O string instruction's, two exits on), the
	 * fault had been retried.
	 */
	for (int later = 0; later < 2; later++) {
		__u64 vcpu, args[3];

		if (setup_faults(&skel, 1) || !(vcpu = kmem_vcpu(&k, 5)))
			goto err;
		args[0] = vcpu;
		args[1] = 0x10000000;
		args[2] = PFERR_GUEST_FINAL | PFERR_WRITE;
		if (run_args(skel->progs.kvm_page_fault_raw, args, 3) ||
		    (later && !kmem_vcpu(&k, 7)) ||
		    run3(skel->progs.kvm_emulate_insn_raw, vcpu, 0, 0))
			goto err;
		thread_figures(skel, &s);
		expectf(later ? "emulate/later-exits-emulation-leaves-a-retry"
			      : "emulate/same-exits-emulation-is-emulate",
			s.counters[KVMMMU_FAULTS] == 1 &&
				s.ret_pf[later ? RET_PF_RETRY : RET_PF_EMULATE] == 1 &&
				s.ret_pf[later ? RET_PF_EMULATE : RET_PF_RETRY] == 0,
			"faults %llu, retry %llu, emulate %llu",
			(unsigned long long)s.counters[KVMMMU_FAULTS],
			(unsigned long long)s.ret_pf[RET_PF_RETRY],
			(unsigned long long)s.ret_pf[RET_PF_EMULATE]);
		faults_bpf__destroy(skel);
	}

	/* a handler's negative return (-EFAULT), from the page-fault-done event */
	if (setup_faults(&skel, 1) ||
	    run_done(skel->progs.kvm_mmu_page_fault_done_raw, (__u64)-14LL, 0))
		goto err;
	thread_figures(skel, &s);
	expectf("error/negative-return-is-an-outcome",
		s.counters[KVMMMU_FAULTS] == 1 && s.ret_pf[KVMMMU_RET_PF_ERROR] == 1 &&
			skel->bss->health.bad_ret == 0,
		"faults %llu, error %llu, bad_ret %llu",
		(unsigned long long)s.counters[KVMMMU_FAULTS],
		(unsigned long long)s.ret_pf[KVMMMU_RET_PF_ERROR],
		(unsigned long long)skel->bss->health.bad_ret);
	faults_bpf__destroy(skel);

	/*
	 * the done event's fields: a fault the fast path fixed set no SPTE of
	 * its own; one fixed off it set its SPTE at its goal level; a retried
	 * one set none, whatever its goal level
	 */
	if (setup_faults(&skel, 1) ||
	    run_done_at(skel->progs.kvm_mmu_page_fault_done_raw, RET_PF_FIXED, 0, 1, 1) ||
	    run_done_at(skel->progs.kvm_mmu_page_fault_done_raw, RET_PF_FIXED, 0, 2, 0) ||
	    run_done_at(skel->progs.kvm_mmu_page_fault_done_raw, RET_PF_RETRY, 0, 1, 0))
		goto err;
	thread_figures(skel, &s);
	expectf("done/fast-path-and-goal-level",
		s.counters[KVMMMU_FAULTS] == 3 && s.counters[KVMMMU_PATH_FAST] == 1 &&
			s.counters[KVMMMU_PATH_DIRECT] == 2 &&
			s.counters[KVMMMU_LEVEL_INSTALLED_2M] == 1 &&
			s.counters[KVMMMU_LEVEL_INSTALLED_4K] == 0,
		"faults %llu, path_fast %llu, path_direct %llu, level_installed 2m %llu, 4k %llu",
		(unsigned long long)s.counters[KVMMMU_FAULTS],
		(unsigned long long)s.counters[KVMMMU_PATH_FAST],
		(unsigned long long)s.counters[KVMMMU_PATH_DIRECT],
		(unsigned long long)s.counters[KVMMMU_LEVEL_INSTALLED_2M],
		(unsigned long long)s.counters[KVMMMU_LEVEL_INSTALLED_4K]);
	faults_bpf__destroy(skel);
	kcell_bpf__destroy(k.skel);
	return 0;
err:
	faults_bpf__destroy(skel);
	kcell_bpf__destroy(k.skel);
	return -1;
}
