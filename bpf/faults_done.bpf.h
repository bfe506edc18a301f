/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The done-event model: kvmmmu:kvm_mmu_page_fault_done (kernel-patches/),
 * one event per fault KVM counts, with its outcome and its start.
 */
#ifndef KVMMMU_FAULTS_DONE_BPF_H
#define KVMMMU_FAULTS_DONE_BPF_H

/*
 * kvmmmu:kvm_mmu_page_fault_done (kernel-patches/: not in any kernel yet):
 * one event per fault KVM counts, with the outcome pf_fixed/pf_spurious/
 * pf_emulate count, the fault's GOAL_LEVEL and whether the fast path
 * resolved it (FAST: KVM's pf_fast moved): its outcome, level and path need
 * no other program. START_NS is when
 * kvm_mmu_do_page_fault() was called, 0 if the event was enabled during the
 * fault.
 */
static __always_inline int on_fault_done(struct kvm_vcpu *vcpu, __u64 cr2_or_gpa, u64 error_code,
					 int ret, __u64 start_ns, __u8 goal_level, bool fast,
					 bool btf)
{
	struct kvmmmu_thread_stats *s = thread();
	enum vcpu_fault_mmu mmu;
	enum kvmmmu_fault_path path;

	if (!s || !armed)
		return 0;
	/*
	 * The MMU a fault off the fast path went to is the vCPU's, as
	 * kvm_mmu_do_page_fault() chooses it: no event on the fault's way is
	 * needed to tell (BTF: the tp_btf program reads it by direct loads)
	 */
	mmu = fast ? VCPU_MMU_UNKNOWN : vcpu_fault_mmu(vcpu, btf);
	if (fast)
		path = KVMMMU_FP_FAST;
	else if (mmu == VCPU_MMU_SHADOW)
		path = KVMMMU_FP_SHADOW;
	else
		path = mmu == VCPU_MMU_TDP && thread_vm_tdp_mmu(s) ? KVMMMU_FP_TDP_MMU
								   : KVMMMU_FP_DIRECT;
	/*
	 * A fault fixed off the fast path had its SPTE set at its goal level, in
	 * every MMU (its request needs no program). A write-protected one's is
	 * not counted: the event carries the emulation or retry it became
	 * (csv.md).
	 */
	s->st.level_installed = ret == ret_pf_fixed && !fast ? goal_level : 0;
	count_installed_level(s, ret);
	s->st.level_installed = 0;
	/* only direct MMUs take the fast path: CR2_OR_GPA is the GPA */
	if (fast && region_shift)
		count_region(s, cr2_or_gpa, -1);
	s->st.access = kvmmmu_access_from_pferr(error_code); /* kvm_mmu_page_fault's */
	count_fault(s);
	s->counters[KVMMMU_PATH_FAST + path]++;
	count_ret(s, ret, path);
	/*
	 * The event carries the fault's start: --sample decides here, once per
	 * fault KVM counts (a TDP fault shows no walk, where the tracepoint
	 * model decides).
	 */
	if (start_ns && start_timing(s))
		kvmmmu_hist_add(&s->hist[KVMMMU_HIST_FAULT], bpf_ktime_get_ns() - start_ns);
	/* this fault is over: nothing of it may end the next one */
	s->st.fast_resolved = 0;
	s->st.level_requested = 0;
	s->st.pending = 0;
	s->st.prefetch = 0;
	s->st.exit_pending = 0;
	s->st.exit_walked = 0;
	s->st.walked = 0;
	s->st.tdp_changes = 0;
	return 0;
}
TP_PAIR_TYPED(kvm_mmu_page_fault_done,
	      on_fault_done(vcpu, cr2_or_gpa, error_code, ret, start_ns, goal_level, fast, true),
	      on_fault_done(vcpu, cr2_or_gpa, error_code, ret, start_ns, goal_level, fast, false),
	      struct kvm_vcpu *vcpu, gpa_t cr2_or_gpa, u64 error_code, int ret, u64 start_ns,
	      u8 goal_level, bool fast)

#endif
