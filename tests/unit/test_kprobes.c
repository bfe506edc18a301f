// SPDX-License-Identifier: GPL-2.0
/* Reading our probes' misses back from tracefs' kprobe_profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kprobes.h"

static void reads_a_profile_line(void **state)
{
	char event[64];
	__u64 missed = 7;

	(void)state;
	/* the kernel's "  %-44s %15lu %15lu\n" */
	assert_true(kprobes_parse_profile_line("  ret_kvm_mmu_page_fault_4242              "
					       "            1048576              17\n",
					       event, sizeof(event), &missed));
	assert_string_equal(event, "ret_kvm_mmu_page_fault_4242");
	assert_int_equal(missed, 17);
	/* misses past 2^32 stay exact */
	assert_true(kprobes_parse_profile_line("  x 1 18446744073709551615\n", event, sizeof(event),
					       &missed));
	assert_true(missed == 18446744073709551615ULL);
}

static void refuses_other_lines(void **state)
{
	char event[64];
	__u64 missed = 7;

	(void)state;
	assert_false(kprobes_parse_profile_line("\n", event, sizeof(event), &missed));
	assert_false(kprobes_parse_profile_line("  name 12\n", event, sizeof(event), &missed));
	assert_false(
		kprobes_parse_profile_line("  name 12 3 extra\n", event, sizeof(event), &missed));
	assert_false(
		kprobes_parse_profile_line("  name twelve 3\n", event, sizeof(event), &missed));
	assert_int_equal(missed, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_a_profile_line),
		cmocka_unit_test(refuses_other_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
