// SPDX-License-Identifier: GPL-2.0
/*
 * bpfscenarios' cases of the faults object's tracepoint model (main() is in
 * bpfscenarios.c).
 *
 * exit-walk/: the faults object's tracepoint model. A page-fault exit whose
 * fault shows no SPTE request ends at KVM_RUN's return (RET_PF_RETRY): a
 * guest walk of the exit's own address before that makes it a shadow-paging
 * fault; a walk of another address (the emulator's) does not.
 *
 * sample/: --sample times 1 in N of the faults KVM counts, whatever other
 * events start timing in between.
 *
 * ept/: on VMX with EPT, kvm:kvm_page_fault carries the exit qualification,
 * whose bit 3 is "readable", not PFERR_RSVD: such an exit is a fault.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "kvmmmu.h"
#include "faults.skel.h"
#include "bpfscenarios.h"

/* This thread's faults by path, as the tracepoint model counted them. */
static void paths(struct faults_bpf *skel, __u64 *faults, __u64 *shadow, __u64 *direct)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};
	struct kvmmmu_thread_stats s;

	*faults = *shadow = *direct = 0;
	if (!bpf_map__lookup_elem(skel->maps.thread_stats, &key, sizeof(key), &s, sizeof(s), 0)) {
		*faults = s.counters[KVMMMU_FAULTS];
		*shadow = s.counters[KVMMMU_PATH_SHADOW];
		*direct = s.counters[KVMMMU_PATH_DIRECT];
	}
}

int exit_walk_scenarios(void)
{
	struct bpf_program *exit_pf, *walk, *to_user;
	__u64 faults, shadow, direct;
	struct faults_bpf *skel;
	char what[128];

	if (setup_faults(&skel, 1))
		return -1;
	exit_pf = skel->progs.kvm_page_fault_raw;
	walk = skel->progs.kvm_mmu_pagetable_walk_raw;
	to_user = skel->progs.kvm_userspace_exit_raw;

	/* an NPF exit at a GPA, then the emulator walks the instruction's GVA */
	if (run3(exit_pf, 0, 0x10000000, PFERR_GUEST_FINAL | PFERR_WRITE) ||
	    run3(walk, 0x7fff0000, 0, 0) || run3(to_user, 0, 0, 0))
		goto err;
	paths(skel, &faults, &shadow, &direct);
	snprintf(what, sizeof(what), "faults %llu, path_shadow %llu, path_direct %llu",
		 (unsigned long long)faults, (unsigned long long)shadow,
		 (unsigned long long)direct);
	expect("exit-walk/emulator-walk-is-not-the-faults",
	       faults == 1 && shadow == 0 && direct == 1, what);

	/* a #PF exit at a GVA, then the shadow MMU walks that GVA: its own walk */
	if (run3(exit_pf, 0, 0x40001000, PFERR_WRITE) || run3(walk, 0x40001000, PFERR_WRITE, 0) ||
	    run3(to_user, 0, 0, 0))
		goto err;
	paths(skel, &faults, &shadow, &direct);
	snprintf(what, sizeof(what), "faults %llu, path_shadow %llu, path_direct %llu",
		 (unsigned long long)faults, (unsigned long long)shadow,
		 (unsigned long long)direct);
	expect("exit-walk/own-walk-is-shadow", faults == 2 && shadow == 1 && direct == 1, what);
	faults_bpf__destroy(skel);
	return 0;
err:
	faults_bpf__destroy(skel);
	return -1;
}

#define SAMPLED_FAULTS 400

/* NAME: SAMPLED_FAULTS faults, half of them timed in histogram HIST (binomial: 5 sd). */
static int expect_half_timed(struct faults_bpf *skel, const char *name, int hist)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};
	double sd = 0.5 * __builtin_sqrt(SAMPLED_FAULTS);
	struct kvmmmu_thread_stats s;
	char what[160];
	__u64 timed;

	if (bpf_map__lookup_elem(skel->maps.thread_stats, &key, sizeof(key), &s, sizeof(s), 0))
		return -1;
	timed = s.hist[hist].count;
	snprintf(what, sizeof(what), "%llu of %llu faults timed (expected %d +- %.0f)",
		 (unsigned long long)timed, (unsigned long long)s.counters[KVMMMU_FAULTS],
		 SAMPLED_FAULTS / 2, 5 * sd);
	expect(name,
	       s.counters[KVMMMU_FAULTS] == SAMPLED_FAULTS &&
		       __builtin_fabs((double)timed - SAMPLED_FAULTS / 2) <= 5 * sd,
	       what);
	return 0;
}

/*
 * --sample 2 in tracepoint mode, where timing starts at a guest walk: each
 * shadow-paging fault follows an emulator's walk (an MMIO access, say). Every
 * second walk would never be a fault's; 1 in 2 of the faults must be timed.
 * A fault here walks address 0 and requests its SPTE with a fault the
 * program cannot read (NULL: address 0), so the walk is its own.
 */
int sample_scenarios(void)
{
	struct faults_bpf *skel;
	struct timespec now;

	if (setup_faults(&skel, 2))
		return -1;
	for (int i = 0; i < SAMPLED_FAULTS; i++)
		if (run3(skel->progs.kvm_mmu_pagetable_walk_raw, 0xfee00000, 0, 0) ||
		    run3(skel->progs.kvm_mmu_pagetable_walk_raw, 0, 0, 0) ||
		    run3(skel->progs.kvm_mmu_spte_requested_raw, 0, 0, 0) ||
		    run3(skel->progs.kvm_mmu_set_spte_raw, 1, 0, 0))
			goto err;
	if (expect_half_timed(skel, "sample/half-of-the-faults-timed", KVMMMU_HIST_WALK_TO_SPTE))
		goto err;
	faults_bpf__destroy(skel);

	/* the page-fault-done event's faults (TDP ones walk nothing): decided at the event */
	if (setup_faults(&skel, 2))
		return -1;
	for (int i = 0; i < SAMPLED_FAULTS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now); /* bpf_ktime_get_ns()'s clock */
		if (run_done(skel->progs.kvm_mmu_page_fault_done_raw, RET_PF_FIXED,
			     (__u64)now.tv_sec * 1000000000ULL + (__u64)now.tv_nsec))
			goto err;
	}
	if (expect_half_timed(skel, "sample/done-event-half-of-the-faults-timed",
			      KVMMMU_HIST_FAULT))
		goto err;
	faults_bpf__destroy(skel);
	return 0;
err:
	faults_bpf__destroy(skel);
	return -1;
}

/* An EPT violation's exit qualification: a read of a present, readable page. */
#define EPT_QUAL_READ (1ULL << 0)
#define EPT_QUAL_READABLE (1ULL << 3)

int ept_scenarios(void)
{
	static struct kvmmmu_thread_stats s;
	struct faults_bpf *skel;

	for (int vmx = 0; vmx <= 1; vmx++) {
		if (setup_faults_on(&skel, 1, vmx))
			return -1;
		/* the fault ends with no SPTE request: KVM_RUN returns (a retry) */
		if (run3(skel->progs.kvm_page_fault_raw, 0, 0x10000000,
			 EPT_QUAL_READ | EPT_QUAL_READABLE) ||
		    run3(skel->progs.kvm_userspace_exit_raw, 0, 0, 0)) {
			faults_bpf__destroy(skel);
			return -1;
		}
		thread_figures(skel, &s);
		/* SVM: bit 3 of an NPF's error code is PFERR_RSVD, an MMIO SPTE's exit */
		expectf(vmx ? "ept/readable-exit-is-a-fault" : "ept/svm-rsvd-exit-is-mmio",
			vmx ? s.counters[KVMMMU_FAULTS] == 1 && s.ret_pf[RET_PF_RETRY] == 1
			    : s.counters[KVMMMU_FAULTS] == 0,
			"faults %llu, ret_pf_retry %llu",
			(unsigned long long)s.counters[KVMMMU_FAULTS],
			(unsigned long long)s.ret_pf[RET_PF_RETRY]);
		/* its access kind from the qualification, not read as a PFERR code (bit 3: RSVD) */
		if (vmx)
			expectf("ept/exit-qualification-access",
				s.counters[KVMMMU_ACCESS_READ] == 1 &&
					s.counters[KVMMMU_ACCESS_PRESENT] == 1 &&
					s.counters[KVMMMU_ACCESS_UNKNOWN] == 0,
				"read %llu, present %llu, unknown %llu",
				(unsigned long long)s.counters[KVMMMU_ACCESS_READ],
				(unsigned long long)s.counters[KVMMMU_ACCESS_PRESENT],
				(unsigned long long)s.counters[KVMMMU_ACCESS_UNKNOWN]);
		faults_bpf__destroy(skel);
	}
	return 0;
}
