/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where KVM's types changed between the kernels kvmmmu runs on, in one place.
 * Each difference is a CO-RE flavour ("type___name": libbpf matches it to the
 * kernel's type by the name before the three underscores) and a helper that
 * answers the question the programs ask, whichever kernel loads them. Each
 * cites the upstream change that made the difference (subject, release, and
 * the commit where it could be checked: see docs/architecture.md).
 *
 * Differences decided in user space rather than by CO-RE (the RET_PF_* values,
 * tracepoint arguments) are rodata the loader sets: see faults_state.bpf.h.
 */
#ifndef KVMMMU_CORE_FIXES_BPF_H
#define KVMMMU_CORE_FIXES_BPF_H

/*
 * kvm->arch.tdp_mmu_enabled: each VM's snapshot of kvm.tdp_mmu, which
 * direct_page_fault() read to choose kvm_tdp_mmu_map(). Removed in 6.3 by
 * "KVM: x86/mmu: Change tdp_mmu to a read-only parameter" (3af15ff47c4d),
 * which made the parameter read-only and split out kvm_tdp_mmu_page_fault().
 */
struct kvm_arch___pre_6_3 {
	bool tdp_mmu_enabled;
} __attribute__((preserve_access_index));

struct kvm___pre_6_3 {
	struct kvm_arch___pre_6_3 arch;
} __attribute__((preserve_access_index));

/* Whether this kernel keeps the TDP MMU choice per VM (before 6.3). */
static __always_inline bool kvm_has_vm_tdp_mmu_flag(void)
{
	struct kvm___pre_6_3 *kvm = NULL;

	return bpf_core_field_exists(kvm->arch.tdp_mmu_enabled);
}

/* The VCPU's VM's TDP MMU flag; false where the kernel keeps none. */
static __always_inline bool vm_tdp_mmu_enabled(struct kvm_vcpu *vcpu)
{
	struct kvm___pre_6_3 *kvm = (void *)BPF_CORE_READ(vcpu, kvm);

	if (!bpf_core_field_exists(kvm->arch.tdp_mmu_enabled))
		return false;
	return BPF_CORE_READ(kvm, arch.tdp_mmu_enabled);
}

/*
 * vcpu->wants_to_run: set while the vCPU is in KVM_RUN's loop. Added in 6.10
 * by "KVM: Introduce vcpu->wants_to_run" (a6816314af57), just before
 * KVM_PRE_FAULT_MEMORY, whose faults are the other kind a vCPU takes. Before
 * it there is no KVM_PRE_FAULT_MEMORY: every vCPU fault is a run's.
 */
struct kvm_vcpu___wants_to_run {
	bool wants_to_run;
} __attribute__((preserve_access_index));

static __always_inline bool kvm_has_wants_to_run(void)
{
	struct kvm_vcpu___wants_to_run *vcpu = NULL;

	return bpf_core_field_exists(vcpu->wants_to_run);
}

/* Whether VCPU is in KVM_RUN; only where kvm_has_wants_to_run(). */
static __always_inline bool vcpu_wants_to_run(struct kvm_vcpu *vcpu)
{
	return BPF_CORE_READ((struct kvm_vcpu___wants_to_run *)vcpu, wants_to_run);
}

/* KVM's TDP page-fault handler; resolved by libbpf from kallsyms, 0 if KVM was not loaded. */
extern const void kvm_tdp_page_fault __ksym __weak;

/* The MMU a vCPU's faults go to, as kvm_mmu_do_page_fault() chooses it. */
enum vcpu_fault_mmu {
	VCPU_MMU_UNKNOWN, /* no vCPU, or a kernel before root_role */
	VCPU_MMU_SHADOW,  /* shadow paging: its MMU is not direct */
	VCPU_MMU_DIRECT,  /* the legacy direct MMU's nonpaging faults (guest paging off) */
	VCPU_MMU_TDP,	  /* TDP faults (fault->is_tdp): the TDP MMU or the legacy one */
};

/*
 * Which MMU VCPU's faults go to: vcpu->arch.mmu->root_role.direct (root_role
 * since 5.19; its commit was not checked here), and whether that MMU's
 * page_fault is kvm_tdp_page_fault. Without the symbol, a direct MMU's faults
 * are taken for TDP ones (guest paging off under shadow paging aside, they
 * are). BTF: VCPU is a typed pointer (tp_btf, fentry/fexit), read by direct
 * loads, which the verifier makes fault-tolerant; else by
 * bpf_probe_read_kernel(), a helper call a field, each about a map lookup.
 */
static __always_inline enum vcpu_fault_mmu vcpu_fault_mmu(struct kvm_vcpu *vcpu, bool btf)
{
	struct kvm_mmu *mmu = NULL;
	void *handler;
	int direct;

	/* 6.12's tp_btf arguments may be NULL: no load through one before this test */
	if (!vcpu || !bpf_core_field_exists(mmu->root_role))
		return VCPU_MMU_UNKNOWN;
	mmu = btf ? vcpu->arch.mmu : BPF_CORE_READ(vcpu, arch.mmu);
	if (!mmu)
		return VCPU_MMU_UNKNOWN;
	direct = btf ? BPF_CORE_READ_BITFIELD(mmu, root_role.direct)
		     : BPF_CORE_READ_BITFIELD_PROBED(mmu, root_role.direct);
	if (!direct)
		return VCPU_MMU_SHADOW;
	if (!&kvm_tdp_page_fault)
		return VCPU_MMU_TDP;
	handler = btf ? mmu->page_fault : BPF_CORE_READ(mmu, page_fault);
	return handler == &kvm_tdp_page_fault ? VCPU_MMU_TDP : VCPU_MMU_DIRECT;
}

/*
 * fault->is_tdp: struct kvm_page_fault came in 5.16 ("KVM: MMU: Introduce
 * struct kvm_page_fault", in the first KVM pull for 5.16; its commit was not
 * checked here). Tested rather than assumed so that a kernel whose BTF lacks
 * the member still loads the programs, reading every fault as shadow paging's.
 */
static __always_inline bool fault_has_is_tdp(void)
{
	struct kvm_page_fault *fault = NULL;

	return bpf_core_field_exists(fault->is_tdp);
}

/*
 * fault->is_private: a fault on the private memory of a VM type that has it
 * (SNP, TDX, KVM_X86_SW_PROTECTED_VM), which guest_memfd backs. It came with
 * guest_memfd ("KVM: x86/mmu: Handle page fault for private memory", 6.8; its
 * commit was not checked here): 6.12, 7.2 and 7.3 have it, 6.1 has neither.
 */
struct kvm_page_fault___private {
	bool is_private;
} __attribute__((preserve_access_index));

static __always_inline bool fault_has_is_private(void)
{
	struct kvm_page_fault___private *fault = NULL;

	return bpf_core_field_exists(fault->is_private);
}

/*
 * KVM_MEMSLOT_GMEM_ONLY (include/linux/kvm_host.h): KVM's own flag on a
 * memslot whose memory is guest_memfd's alone, the VMM mapping that file
 * (GUEST_MEMFD_FLAG_MMAP): kvm_memslot_is_gmem_only(). 7.2 and 7.3 have it,
 * 6.12 not (where bit 17 is unused, as in 6.1). A number, which CO-RE cannot
 * relocate: checked in each kernel kvmmmu reads.
 */
#define KVMMMU_MEMSLOT_GMEM_ONLY (1U << 17)

/*
 * A VM's memslots by id: the id_hash of struct kvm_memslots, through each
 * slot's id_node[node_idx]. Both came in 5.17: "KVM: Resolve memslot ID via a
 * hash table instead of via a static array" (26b8345abc75) and "KVM: Keep
 * memslots in tree-based structures instead of array-based ones"
 * (a54d806688fe). Before them, slots are found through id_to_index, which
 * kvmmmu does not read (the memslot figures say "unknown" there).
 */
static __always_inline bool kvm_has_memslot_id_hash(void)
{
	struct kvm_memslots *slots = NULL;

	return bpf_core_field_exists(slots->id_hash);
}

#endif
