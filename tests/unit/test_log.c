// SPDX-License-Identifier: GPL-2.0
/* Which program libbpf said it failed to load: the collector loads it another way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "log.h"

static void finds_the_failed_program(void **state)
{
	char name[64];

	(void)state;
	/* libbpf 1.1's words, as its print callback gets them */
	assert_true(log_parse_failed_prog(
		"libbpf: prog 'kvm_mmu_set_spte_btf': failed to load: -22\n", name, sizeof(name)));
	assert_string_equal(name, "kvm_mmu_set_spte_btf");
	assert_true(
		log_parse_failed_prog("libbpf: prog 'paging64_page_fault_fexit': failed to load: "
				      "-524\n",
				      name, sizeof(name)));
	assert_string_equal(name, "paging64_page_fault_fexit");
	/* other messages about a program say nothing about its load */
	assert_false(log_parse_failed_prog("libbpf: prog 'x_btf': BPF program load failed: "
					   "Invalid argument\n",
					   name, sizeof(name)));
	assert_false(log_parse_failed_prog("libbpf: failed to load object 'faults_bpf'\n", name,
					   sizeof(name)));
	assert_false(log_parse_failed_prog("libbpf: prog '': failed to load: -22\n", name,
					   sizeof(name)));
	/* a name that does not fit is not cut to another program's name */
	assert_false(
		log_parse_failed_prog("libbpf: prog 'abcdefghij': failed to load: -22\n", name, 8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_the_failed_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
