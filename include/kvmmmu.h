/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structures shared by kvmmmu's BPF programs and user space. Fixed-width
 * types only, so the header compiles in both worlds.
 */
#ifndef KVMMMU_H
#define KVMMMU_H

#include "kvmmmu_hist.h"

/* RET_PF_* values index ret_pf[]; every kernel so far uses 0..6. */
#define KVMMMU_RET_PF_SLOTS 16

/* Per-thread event counters. Keep kvmmmu_counter_names[] (src/trace/model.c) in sync. */
enum kvmmmu_counter {
	KVMMMU_FAULTS,		   /* faults handled: what KVM counts as pf_taken */
	KVMMMU_PATH_FAST,	   /* resolved by fast_page_fault, without mmu_lock */
	KVMMMU_PATH_TDP_MMU,	   /* resolved by the TDP MMU */
	KVMMMU_PATH_SHADOW,	   /* resolved by shadow paging (FNAME(page_fault)) */
	KVMMMU_PATH_DIRECT,	   /* resolved by the legacy direct MMU (tdp_mmu=N) */
	KVMMMU_MEMSLOT_LOOKUPS,	   /* kvm_vcpu_gfn_to_memslot calls inside a fault */
	KVMMMU_MEMSLOT_OTHER,	   /* kvm_vcpu_gfn_to_memslot calls outside faults */
	KVMMMU_GUEST_WALKS,	   /* kvm_mmu_pagetable_walk */
	KVMMMU_WALKER_ERRORS,	   /* kvm_mmu_walker_error: #PF for the guest */
	KVMMMU_SPTE_REQUESTED,	   /* kvm_mmu_spte_requested */
	KVMMMU_SPTES_SET,	   /* kvm_mmu_set_spte */
	KVMMMU_SPTES_PREFETCHED,   /* kvm_mmu_set_spte after the faulting SPTE */
	KVMMMU_FAST_PF_CALLS,	   /* kvmmmu:fast_page_fault */
	KVMMMU_TDP_SPTE_CHANGES,   /* kvm_tdp_mmu_spte_changed */
	KVMMMU_MMIO_FAULTS,	   /* handle_mmio_page_fault: MMIO SPTE hits */
	KVMMMU_MMIO_SPTES_CREATED, /* mark_mmio_spte */
	KVMMMU_PF_EXITS,	   /* kvm:kvm_page_fault: #PF/NPF/EPT-violation exits */
	KVMMMU_N_COUNTERS,
};

/* Latency histograms. Keep kvmmmu_hist_names[] (src/trace/model.c) in sync. */
enum kvmmmu_hist_id {
	KVMMMU_HIST_FAULT,	  /* kvm_mmu_page_fault entry to exit */
	KVMMMU_HIST_FAST,	  /* handler entry to the fast_page_fault tracepoint */
	KVMMMU_HIST_SLOW,	  /* handler entry to exit, when the fast path did not resolve it */
	KVMMMU_HIST_WALK,	  /* kvm_mmu_pagetable_walk to its last kvm_mmu_paging_element */
	KVMMMU_HIST_MEMSLOT,	  /* one kvm_vcpu_gfn_to_memslot call inside a fault */
	KVMMMU_HIST_WALK_TO_SPTE, /* kvm_mmu_pagetable_walk to the fault's kvm_mmu_set_spte */
	KVMMMU_N_HISTS,
};

struct kvmmmu_thread_key {
	__u32 tgid;
	__u32 tid;
};

/* Per-thread state of the fault currently being handled (BPF-private). */
struct kvmmmu_fault_state {
	__u64 walk_ts;	     /* last kvm_mmu_pagetable_walk */
	__u64 element_ts;    /* last kvm_mmu_paging_element of that walk */
	__u64 fault_ts;	     /* kvm_mmu_page_fault entry */
	__u64 handler_ts;    /* page-fault handler entry */
	__u64 memslot_ts;    /* kvm_vcpu_gfn_to_memslot entry */
	__u32 pending;	     /* an SPTE was requested and is not resolved yet */
	__u32 in_fault;	     /* inside kvm_mmu_page_fault (or a handler) */
	__u32 fast_resolved; /* fast_page_fault fixed this fault */
	__u32 tdp_changes;   /* TDP MMU SPTE changes seen since the request */
	__u32 walked;	     /* a guest walk preceded the request */
	__u32 direct;	     /* direct_page_fault entered in this fault */
};

struct kvmmmu_thread_stats {
	__s32 vcpu_id;	  /* from the vCPU the thread has loaded; -1 when unknown */
	__u32 excluded;	  /* the thread's process is not traced */
	char comm[16];	  /* the thread's name when first seen */
	char process[16]; /* its process's name (the thread group leader's) */
	/* state and counters first: every event touches them, few touch a histogram */
	struct kvmmmu_fault_state st;
	__u64 counters[KVMMMU_N_COUNTERS];
	__u64 ret_pf[KVMMMU_RET_PF_SLOTS];
	struct kvmmmu_hist hist[KVMMMU_N_HISTS];
};

/* Global health counters, in the BPF object's .bss. */
struct kvmmmu_health {
	__u64 drops;   /* events lost because the thread map was full */
	__u64 bad_ret; /* RET_PF values beyond KVMMMU_RET_PF_SLOTS */
};

#endif
