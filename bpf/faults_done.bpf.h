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
 * pf_emulate count. The path is the tracepoint model's: the fast path if it
 * resolved the fault, else the MMU its SPTE request (or its exit, with no
 * request) named. START_NS is when kvm_mmu_do_page_fault() was called, 0 if
 * the event was enabled during the fault.
 */
static __always_inline int on_fault_done(struct kvm_vcpu *vcpu, u64 error_code, int ret,
					 __u64 start_ns)
{
	struct kvmmmu_thread_stats *s = thread();
	enum kvmmmu_fault_path path;

	if (!s || !armed)
		return 0;
	if (s->st.fast_resolved)
		path = KVMMMU_FP_FAST;
	else if (s->st.closed_path)
		path = (s->st.closed_path - 1) & (KVMMMU_N_FAULT_PATHS - 1);
	else if (s->st.pending && !s->st.prefetch) /* a prefetch left unset is no fault's */
		path = kvmmmu_model_path(&s->st);
	else if (s->st.exit_walked || !vcpu_mmu_direct(vcpu))
		/*
		 * No request: retried, or the guest's own #PF; the MMU it went
		 * to says which (its page-fault exit is not traced here unless
		 * the event counts are wanted)
		 */
		path = KVMMMU_FP_SHADOW;
	else
		path = thread_vm_tdp_mmu(s) ? KVMMMU_FP_TDP_MMU : KVMMMU_FP_DIRECT;
	count_installed_level(s, ret);
	s->st.level_installed = 0;
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
	s->st.closed_path = 0;
	s->st.pending = 0;
	s->st.prefetch = 0;
	s->st.exit_pending = 0;
	s->st.exit_walked = 0;
	s->st.walked = 0;
	s->st.tdp_changes = 0;
	return 0;
}
TP_PAIR(kvm_mmu_page_fault_done, on_fault_done(vcpu, error_code, ret, start_ns),
	struct kvm_vcpu *vcpu, gpa_t cr2_or_gpa, u64 error_code, int ret, u64 start_ns)

#endif
