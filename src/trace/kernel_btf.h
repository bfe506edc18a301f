/* SPDX-License-Identifier: GPL-2.0 */
/* The running kernel's BTF: vmlinux plus the kvm module's split BTF when KVM is a module. */
#ifndef KVMMMU_KERNEL_BTF_H
#define KVMMMU_KERNEL_BTF_H

#include <stdbool.h>

struct btf;

struct kernel_btf {
	struct btf *vmlinux;
	struct btf *kvm;    /* NULL when KVM is built in or the module has no BTF */
	bool kvm_is_module; /* /sys/module/kvm/initstate exists */
	int err;	    /* why vmlinux BTF is missing, -errno */
};

int kernel_btf_load(struct kernel_btf *kb);
void kernel_btf_free(struct kernel_btf *kb);
/* The BTF where KVM's types live: the module's when it has one, else vmlinux. */
struct btf *kernel_btf_kvm_types(const struct kernel_btf *kb);
/* A BTF FUNC record named NAME, in vmlinux or the kvm module; sets *btf_id and *in_module. */
bool kernel_btf_find_func(const struct kernel_btf *kb, const char *name, int *btf_id,
			  bool *in_module);
/* How many parameters function NAME takes in this kernel's BTF; -ENOENT without a record. */
int kernel_btf_func_params(const struct kernel_btf *kb, const char *name);
/* Whether vmlinux has kfunc NAME (a FUNC record: kfuncs newer than the kernel have none). */
bool kernel_btf_has_kfunc(const struct kernel_btf *kb, const char *name);
/* Whether the kernel can attach tp_btf programs to tracepoint EVENT (btf_trace_EVENT). */
bool kernel_btf_has_tp_btf(const struct kernel_btf *kb, const char *event);
/* How many arguments tracepoint EVENT passes (btf_trace_EVENT's, less its __data); -ENOENT. */
int kernel_btf_tp_args(const struct kernel_btf *kb, const char *event);
/* fd of a kernel BTF object by name ("kvm"), for attaching to module functions; -errno. */
int kernel_btf_module_fd(const char *name);

#endif
