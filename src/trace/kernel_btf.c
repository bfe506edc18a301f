// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel_btf.h"

int kernel_btf_load(struct kernel_btf *kb)
{
	memset(kb, 0, sizeof(*kb));
	kb->kvm_is_module = access("/sys/module/kvm/initstate", F_OK) == 0;
	kb->vmlinux = btf__load_vmlinux_btf();
	if (!kb->vmlinux) {
		kb->err = -errno;
		return kb->err;
	}
	if (kb->kvm_is_module)
		kb->kvm = btf__load_module_btf("kvm", kb->vmlinux);
	return 0;
}

void kernel_btf_free(struct kernel_btf *kb)
{
	btf__free(kb->kvm);
	btf__free(kb->vmlinux);
	kb->kvm = kb->vmlinux = NULL;
}

struct btf *kernel_btf_kvm_types(const struct kernel_btf *kb)
{
	return kb->kvm ? kb->kvm : kb->vmlinux;
}

bool kernel_btf_find_func(const struct kernel_btf *kb, const char *name, int *btf_id,
			  bool *in_module)
{
	int id;

	/* Split module BTF also resolves vmlinux ids; look there first for the module. */
	if (kb->kvm) {
		id = btf__find_by_name_kind(kb->kvm, name, BTF_KIND_FUNC);
		if (id > 0 && (__u32)id >= btf__type_cnt(kb->vmlinux)) {
			*btf_id = id;
			*in_module = true;
			return true;
		}
	}
	if (!kb->vmlinux)
		return false;
	id = btf__find_by_name_kind(kb->vmlinux, name, BTF_KIND_FUNC);
	if (id <= 0)
		return false;
	*btf_id = id;
	*in_module = false;
	return true;
}

int kernel_btf_func_params(const struct kernel_btf *kb, const char *name)
{
	const struct btf_type *func, *proto;
	struct btf *b;
	bool in_module;
	int id;

	if (!kernel_btf_find_func(kb, name, &id, &in_module))
		return -ENOENT;
	b = in_module ? kb->kvm : kb->vmlinux;
	func = btf__type_by_id(b, id);
	proto = func ? btf__type_by_id(b, func->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return -ENOENT;
	return btf_vlen(proto);
}

bool kernel_btf_has_kfunc(const struct kernel_btf *kb, const char *name)
{
	return kb->vmlinux && btf__find_by_name_kind(kb->vmlinux, name, BTF_KIND_FUNC) > 0;
}

bool kernel_btf_has_tp_btf(const struct kernel_btf *kb, const char *event)
{
	struct btf *b = kernel_btf_kvm_types(kb);
	char name[128];

	if (!b)
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", event);
	return btf__find_by_name_kind(b, name, BTF_KIND_TYPEDEF) > 0;
}

int kernel_btf_tp_args(const struct kernel_btf *kb, const char *event)
{
	struct btf *b = kernel_btf_kvm_types(kb);
	const struct btf_type *t;
	char name[128];
	int id;

	if (!b)
		return -ENOENT;
	snprintf(name, sizeof(name), "btf_trace_%s", event);
	id = btf__find_by_name_kind(b, name, BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(b, id) : NULL;
	t = t ? btf__type_by_id(b, t->type) : NULL; /* the pointer */
	t = t && btf_is_ptr(t) ? btf__type_by_id(b, t->type) : NULL;
	if (!t || !btf_is_func_proto(t) || !btf_vlen(t))
		return -ENOENT;
	return btf_vlen(t) - 1;
}

int kernel_btf_module_fd(const char *name)
{
	__u32 id = 0;

	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char got[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		info.name = (unsigned long)got;
		info.name_len = sizeof(got);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
		    !strcmp(got, name))
			return fd;
		close(fd);
	}
	return -ENOENT;
}
