// SPDX-License-Identifier: GPL-2.0
/* Function prototypes from BTF: what the fexit programs' fixed return index is checked against. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <bpf/btf.h>
#include <cmocka.h>

#include "kernel_btf.h"

/* A function NAME(vcpu, ...) of N pointer parameters returning int, as BTF has it. */
static void add_func(struct btf *b, const char *name, int n)
{
	int int_id = btf__find_by_name_kind(b, "int", BTF_KIND_INT);
	int ptr_id, proto;

	if (int_id <= 0)
		int_id = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	ptr_id = btf__add_ptr(b, int_id);
	proto = btf__add_func_proto(b, int_id);
	assert_true(proto > 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(btf__add_func_param(b, "arg", ptr_id), 0);
	assert_true(btf__add_func(b, name, BTF_FUNC_GLOBAL, proto) > 0);
}

static void counts_parameters(void **state)
{
	struct kernel_btf kb = {.vmlinux = btf__new_empty()};

	(void)state;
	assert_non_null(kb.vmlinux);
	/* 5.16+: kvm_tdp_page_fault(vcpu, fault); 5.15: (vcpu, gpa, error_code, prefault) */
	add_func(kb.vmlinux, "kvm_tdp_page_fault", 2);
	add_func(kb.vmlinux, "paging64_page_fault", 4);
	add_func(kb.vmlinux, "kvm_mmu_unload", 1);
	assert_int_equal(kernel_btf_func_params(&kb, "kvm_tdp_page_fault"), 2);
	assert_int_equal(kernel_btf_func_params(&kb, "paging64_page_fault"), 4);
	assert_int_equal(kernel_btf_func_params(&kb, "kvm_mmu_unload"), 1);
	assert_int_equal(kernel_btf_func_params(&kb, "no_such_function"), -ENOENT);
	kernel_btf_free(&kb); /* its name index too */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_parameters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
