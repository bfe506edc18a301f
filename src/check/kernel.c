// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <bpf/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sysinfo.h"

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Vendor modules: /sys/module/kvm_* (kvm_intel, kvm_amd, or others such as kvm_pvm). */
static void vendor_modules(char *buf, size_t len)
{
	DIR *d = opendir("/sys/module");
	struct dirent *e;
	size_t used = 0;

	buf[0] = '\0';
	if (!d)
		return;
	while ((e = readdir(d))) {
		int n;

		if (strncmp(e->d_name, "kvm_", 4))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? " " : "", e->d_name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	closedir(d);
}

static void vendor_param(const char *module, const char *param, const char *what)
{
	char path[128], label[64], val[32];

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", module, param);
	if (!sysinfo_read_line(path, val, sizeof(val)))
		return;
	snprintf(label, sizeof(label), "%s.%s", module, param);
	report_item(label, val, "%s", what);
}

void check_kernel(struct check_state *st)
{
	char buf[256], tdp[16];
	bool has_kvm = exists("/sys/module/kvm");

	report_heading("Kernel");
	report_item("release", sysinfo_kernel_release(buf, sizeof(buf)), NULL);

	kernel_btf_load(&st->kb);
	st->btf = st->kb.vmlinux != NULL;
	if (st->btf)
		report_item("vmlinux BTF (/sys/kernel/btf/vmlinux)", "yes", NULL);
	else
		report_item("vmlinux BTF (/sys/kernel/btf/vmlinux)", "no",
			    "%s: kvmmmu needs "
			    "CONFIG_DEBUG_INFO_BTF",
			    strerror(-st->kb.err));

	if (!has_kvm)
		report_item("KVM", "no", "/sys/module/kvm is missing: KVM is not loaded");
	else
		report_item("KVM", st->kb.kvm_is_module ? "module" : "built in", NULL);
	if (st->kb.kvm_is_module)
		report_item("kvm module BTF (/sys/kernel/btf/kvm)", yes_no(st->kb.kvm != NULL),
			    "%s",
			    st->kb.kvm ? "KVM's types come from it"
			    : exists("/sys/kernel/btf/kvm")
				    ? "present but could not be loaded"
				    : "missing: needs CONFIG_DEBUG_INFO_BTF_MODULES");
	else if (has_kvm)
		report_item("kvm module BTF (/sys/kernel/btf/kvm)", "n/a",
			    "KVM is built in: its types are in vmlinux BTF");

	vendor_modules(buf, sizeof(buf));
	report_item("vendor modules (/sys/module/kvm_*)", *buf ? buf : "none",
		    *buf ? NULL : "no vendor module loaded: /dev/kvm cannot run VMs");
	sysinfo_tdp_mmu(tdp, sizeof(tdp));
	report_item("kvm.tdp_mmu", tdp, "%s",
		    !strcmp(tdp, "Y")	? "TDP MMU: faults go through kvm_tdp_page_fault"
		    : !strcmp(tdp, "N") ? "no TDP MMU: faults go through the shadow MMU code"
					: "parameter not found");
	vendor_param("kvm_intel", "ept", "EPT (hardware TDP)");
	vendor_param("kvm_amd", "npt", "NPT (hardware TDP)");
}

static void mmu_lock_member(struct check_state *st)
{
	const char *label = "struct kvm: mmu_lock (BTF)";
	struct btf *btf = kernel_btf_kvm_types(&st->kb);
	const struct btf_type *t;
	const struct btf_member *m;
	int id;

	if (!btf) {
		report_item(label, "no", "no kernel BTF");
		return;
	}
	id = btf__find_by_name_kind(btf, "kvm", BTF_KIND_STRUCT);
	if (id <= 0) {
		report_item(label, "no", "struct kvm is not in BTF");
		return;
	}
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const struct btf_type *mt;
		const char *type_name;
		__u32 bits;

		if (strcmp(btf__name_by_offset(btf, m->name_off), "mmu_lock"))
			continue;
		mt = btf__type_by_id(btf, m->type);
		type_name = mt ? btf__name_by_offset(btf, mt->name_off) : NULL;
		bits = btf_member_bit_offset(t, i);
		report_item(label, "yes", "%s at offset %u: lock_addr == (void *)kvm + %u",
			    type_name && *type_name ? type_name : "(anonymous type)", bits / 8,
			    bits / 8);
		return;
	}
	report_item(label, "no", "struct kvm has no mmu_lock member");
}

void check_mmu_lock(struct check_state *st)
{
	report_heading("Lock contention on kvm->mmu_lock");
	report_tracepoint(st, "lock", "contention_begin", "mmu_lock");
	report_tracepoint(st, "lock", "contention_end", "mmu_lock");
	mmu_lock_member(st);
}
