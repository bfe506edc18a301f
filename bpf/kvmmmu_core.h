/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel types kvmmmu's BPF programs read, declared with only the
 * members we use. preserve_access_index makes every access a CO-RE
 * relocation, resolved at load time against the running kernel's BTF
 * (vmlinux, or the kvm module's BTF when KVM is a module), so the build
 * never reads the build host's kernel and member offsets are never assumed.
 * scripts/check-core-types.sh checks every member below against a kernel.
 */
#ifndef KVMMMU_CORE_H
#define KVMMMU_CORE_H
/* This header stands in for vmlinux.h: bpf_tracing.h then uses kernel pt_regs names. */
#define __VMLINUX_H__

#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;
typedef _Bool bool;
typedef u64 gpa_t;
typedef u64 gfn_t;
#define true 1
#define false 0

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

/* What bpf_tracing.h's PT_REGS_PARM*() and PT_REGS_RC() read on x86. */
struct pt_regs {
	unsigned long di;
	unsigned long si;
	unsigned long dx;
	unsigned long cx;
	unsigned long r8;
	unsigned long r9;
	unsigned long ax;
	unsigned long sp;
	unsigned long ip;
};

struct mm_struct;

/* A VMM's VM fd, to its struct kvm: current->files->fdt->fd[FD]->private_data. */
struct file {
	void *private_data;
};

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
};

struct files_struct {
	struct fdtable *fdt;
};

struct hlist_node {
	struct hlist_node *next;
};

struct hlist_head {
	struct hlist_node *first;
};

typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live; /* threads of the group not yet exited */
};

struct task_struct {
	unsigned int flags; /* PF_KTHREAD */
	int pid;
	int tgid;
	struct mm_struct *mm;
	struct signal_struct *signal;
	struct files_struct *files; /* NULL once exit_files() has run */
	struct task_struct *group_leader;
	char comm[16];
	struct hlist_head preempt_notifiers;
};

/*
 * A VM's memslots of one address space (5.17+): found by id in id_hash,
 * through the id_node[node_idx] of each struct kvm_memory_slot.
 */
struct kvm_memslots {
	struct hlist_head id_hash[128]; /* DECLARE_HASHTABLE(id_hash, 7) */
	int node_idx;
};

struct kvm_memory_slot {
	struct hlist_node id_node[2];
	u32 flags;
	short id;
};

struct kvm {
	struct {
		int _opaque;
	} mmu_lock; /* rwlock_t since 5.12; only its address is used */
	struct mm_struct *mm;
	struct kvm_memslots *memslots[2]; /* per address space (x86: normal, SMM) */
};

struct preempt_notifier {
	struct hlist_node link;
};

/* the role of an MMU's roots: direct (TDP, or guest paging off) or shadow paging */
union kvm_mmu_page_role {
	u32 word;
	struct {
		unsigned int level : 4;
		unsigned int has_4_byte_gpte : 1;
		unsigned int quadrant : 2;
		unsigned int direct : 1;
	};
};

struct kvm_mmu {
	void *page_fault; /* its fault handler: kvm_tdp_page_fault for TDP faults */
	union kvm_mmu_page_role root_role; /* 5.19+ */
};

struct kvm_vcpu_arch {
	struct {
		int _opaque;
	} root_mmu;	     /* struct kvm_mmu: only its address is used */
	struct kvm_mmu *mmu; /* the MMU faults go to: root_mmu, or a nested guest's */
};

struct kvm_vcpu_stat {
	u64 exits;	 /* VM exits so far: which exit an event belongs to */
	u64 pf_fast;	 /* faults fast_page_fault() fixed (or found spurious) */
	u64 pf_spurious; /* faults that found their SPTE already right: an untraced end's kind */
};

struct kvm_vcpu {
	struct kvm *kvm;
	struct preempt_notifier preempt_notifier;
	int vcpu_id;
	struct kvm_vcpu_arch arch;
	struct kvm_vcpu_stat stat;
};

struct kvm_page_fault {
	gpa_t addr;
	bool prefetch;
	bool exec;
	bool write;
	bool present;
	bool rsvd;
	bool is_tdp;
	bool huge_page_disallowed;
	struct kvm_memory_slot *slot;
	/* (u8 in 6.1 and 6.12: libbpf sizes each load to the kernel's field) */
	u8 max_level;
	u8 req_level;
	u8 goal_level;
	gfn_t gfn;
};

/* kernel/trace/trace_syscalls.c: the records of the syscalls:* tracepoints */
struct syscall_trace_enter {
	int nr;
	unsigned long args[]; /* flexible in the kernel too */
};

struct syscall_trace_exit {
	int nr;
	long ret;
};

#pragma clang attribute pop

#endif
