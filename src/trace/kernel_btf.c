// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "kernel_btf.h"

/* A name's first FUNC or TYPEDEF record in vmlinux, and in the kvm module. */
struct btf_name_slot {
	const char *name; /* the BTF's own string; NULL: free slot */
	__u16 kind;
	__s32 vmlinux_id, module_id; /* 0: none */
};

static size_t slot_of(const struct kernel_btf *kb, const char *name, __u16 kind)
{
	size_t at = hash_u64(hash_str(HASH_INIT, name), kind) & (kb->index_cap - 1);

	while (kb->index[at].name &&
	       (kb->index[at].kind != kind || strcmp(kb->index[at].name, name)))
		at = (at + 1) & (kb->index_cap - 1);
	return at;
}

/* One walk over every type, for all lookups to come: 0, or -ENOMEM. */
static int build_index(struct kernel_btf *kb)
{
	struct btf *b = kernel_btf_kvm_types(kb);
	__u32 n = b ? btf__type_cnt(b) : 0, n_vmlinux = btf__type_cnt(kb->vmlinux);
	size_t cap = 1024;

	while (cap < 2 * (size_t)n) /* at most half full: FUNCs and TYPEDEFs are fewer */
		cap *= 2;
	kb->index = calloc(cap, sizeof(*kb->index));
	if (!kb->index)
		return -ENOMEM;
	kb->index_cap = cap;
	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		__u16 kind = btf_kind(t);
		struct btf_name_slot *slot;
		const char *name;

		if (kind != BTF_KIND_FUNC && kind != BTF_KIND_TYPEDEF)
			continue;
		name = btf__name_by_offset(b, t->name_off);
		if (!name || !*name)
			continue;
		slot = &kb->index[slot_of(kb, name, kind)];
		slot->name = name;
		slot->kind = kind;
		if (id < n_vmlinux && !slot->vmlinux_id)
			slot->vmlinux_id = (__s32)id;
		else if (id >= n_vmlinux && !slot->module_id)
			slot->module_id = (__s32)id;
	}
	return 0;
}

/* NAME's records of KIND, or NULL: the index, else (no memory) a walk as before. */
static const struct btf_name_slot *find(struct kernel_btf *kb, const char *name, __u16 kind,
					struct btf_name_slot *walked)
{
	struct btf *b = kernel_btf_kvm_types(kb);
	__u32 n_vmlinux;
	int id;

	if (!b)
		return NULL;
	if (kb->index || !build_index(kb)) {
		const struct btf_name_slot *slot = &kb->index[slot_of(kb, name, kind)];

		return slot->name ? slot : NULL;
	}
	/* split BTF: the first match may be vmlinux's; the module's own comes after */
	n_vmlinux = btf__type_cnt(kb->vmlinux);
	memset(walked, 0, sizeof(*walked));
	id = btf__find_by_name_kind(kb->vmlinux, name, kind);
	walked->vmlinux_id = id > 0 ? id : 0;
	for (__u32 i = n_vmlinux; b != kb->vmlinux && i < btf__type_cnt(b); i++) {
		const struct btf_type *t = btf__type_by_id(b, i);

		if (btf_kind(t) == kind && !strcmp(btf__name_by_offset(b, t->name_off), name)) {
			walked->module_id = (__s32)i;
			break;
		}
	}
	walked->name = walked->vmlinux_id || walked->module_id ? name : NULL;
	return walked->name ? walked : NULL;
}

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
	free(kb->index);
	kb->index = NULL;
	kb->index_cap = 0;
	btf__free(kb->kvm);
	btf__free(kb->vmlinux);
	kb->kvm = kb->vmlinux = NULL;
}

struct btf *kernel_btf_kvm_types(const struct kernel_btf *kb)
{
	return kb->kvm ? kb->kvm : kb->vmlinux;
}

bool kernel_btf_find_func(struct kernel_btf *kb, const char *name, int *btf_id, bool *in_module)
{
	struct btf_name_slot walked;
	const struct btf_name_slot *slot = find(kb, name, BTF_KIND_FUNC, &walked);

	if (!slot)
		return false;
	/* vmlinux's first, as a walk over split BTF meets them */
	*in_module = !slot->vmlinux_id;
	*btf_id = slot->vmlinux_id ? slot->vmlinux_id : slot->module_id;
	return true;
}

int kernel_btf_func_params(struct kernel_btf *kb, const char *name)
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

bool kernel_btf_has_kfunc(struct kernel_btf *kb, const char *name)
{
	struct btf_name_slot walked;
	const struct btf_name_slot *slot = find(kb, name, BTF_KIND_FUNC, &walked);

	return slot && slot->vmlinux_id;
}

/* btf_trace_EVENT's id in the BTF of KVM's types, or 0. */
static int tp_typedef(struct kernel_btf *kb, const char *event)
{
	struct btf_name_slot walked;
	const struct btf_name_slot *slot;
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", event);
	slot = find(kb, name, BTF_KIND_TYPEDEF, &walked);
	if (!slot)
		return 0;
	return slot->vmlinux_id ? slot->vmlinux_id : slot->module_id;
}

bool kernel_btf_has_tp_btf(struct kernel_btf *kb, const char *event)
{
	return tp_typedef(kb, event) > 0;
}

int kernel_btf_tp_args(struct kernel_btf *kb, const char *event)
{
	struct btf *b = kernel_btf_kvm_types(kb);
	int id = tp_typedef(kb, event);
	const struct btf_type *t;

	t = id > 0 ? btf__type_by_id(b, id) : NULL;
	t = t ? btf__type_by_id(b, t->type) : NULL; /* the pointer */
	t = t && btf_is_ptr(t) ? btf__type_by_id(b, t->type) : NULL;
	if (!t || !btf_is_func_proto(t) || !btf_vlen(t))
		return -ENOENT;
	return btf_vlen(t) - 1;
}

bool kernel_btf_kvm_has_member(struct kernel_btf *kb, const char *struct_name, const char *member)
{
	struct btf *b = kernel_btf_kvm_types(kb);
	int id = b ? btf__find_by_name_kind(b, struct_name, BTF_KIND_STRUCT) : -ENOENT;
	const struct btf_type *t = id > 0 ? btf__type_by_id(b, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(b, m[i].name_off), member))
			return true;
	return false;
}

int kernel_btf_kvm_fd(struct kernel_btf *kb)
{
	__u32 id = 0;
	int fd;

	if (kb->kvm_btf_id) {
		fd = bpf_btf_get_fd_by_id(kb->kvm_btf_id);
		if (fd >= 0)
			return fd;
		kb->kvm_btf_id = 0; /* the module was reloaded: look again */
	}
	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char got[64] = "";

		fd = bpf_btf_get_fd_by_id(id);
		if (fd < 0)
			continue;
		info.name = (unsigned long)got;
		info.name_len = sizeof(got);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
		    !strcmp(got, "kvm")) {
			kb->kvm_btf_id = id;
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}
