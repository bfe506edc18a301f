/* SPDX-License-Identifier: GPL-2.0 */
/* The running kernel's BTF: vmlinux plus the kvm module's split BTF when KVM is a module. */
#ifndef KVMMMU_KERNEL_BTF_H
#define KVMMMU_KERNEL_BTF_H

#include <stdbool.h>
#include <linux/types.h>

struct btf;
struct btf_name_slot;

struct kernel_btf {
	struct btf *vmlinux;
	struct btf *kvm;    /* NULL when KVM is built in or the module has no BTF */
	bool kvm_is_module; /* /sys/module/kvm/initstate exists */
	int err;	    /* why vmlinux BTF is missing, -errno */
	__u32 kvm_btf_id;   /* the kvm module's kernel BTF object, once found (0: not yet) */
	/*
	 * FUNC and TYPEDEF records by name, built at the first lookup: each
	 * btf__find_by_name_kind() walks every type (some 150,000 with the kvm
	 * module), and the collector asks dozens of names.
	 */
	struct btf_name_slot *index;
	size_t index_cap;
};

int kernel_btf_load(struct kernel_btf *kb);
void kernel_btf_free(struct kernel_btf *kb);
/* The BTF where KVM's types live: the module's when it has one, else vmlinux. */
struct btf *kernel_btf_kvm_types(const struct kernel_btf *kb);
/* A BTF FUNC record named NAME, in vmlinux or the kvm module; sets *btf_id and *in_module. */
bool kernel_btf_find_func(struct kernel_btf *kb, const char *name, int *btf_id, bool *in_module);
/* How many parameters function NAME takes in this kernel's BTF; -ENOENT without a record. */
int kernel_btf_func_params(struct kernel_btf *kb, const char *name);
/* Whether vmlinux has kfunc NAME (a FUNC record: kfuncs newer than the kernel have none). */
bool kernel_btf_has_kfunc(struct kernel_btf *kb, const char *name);
/* Whether the kernel can attach tp_btf programs to tracepoint EVENT (btf_trace_EVENT). */
bool kernel_btf_has_tp_btf(struct kernel_btf *kb, const char *event);
/* How many arguments tracepoint EVENT passes (btf_trace_EVENT's, less its __data); -ENOENT. */
int kernel_btf_tp_args(struct kernel_btf *kb, const char *event);
/* Whether KVM's struct STRUCT_NAME has a member MEMBER (a walk over every type: ask once). */
bool kernel_btf_kvm_has_member(struct kernel_btf *kb, const char *struct_name, const char *member);
/*
 * fd of the kvm module's kernel BTF object, for attaching to its functions;
 * -errno. Found by a walk over every kernel BTF object (one per module: a
 * fraction of a second under emulation) the first time, by id afterwards.
 */
int kernel_btf_kvm_fd(struct kernel_btf *kb);

#endif
