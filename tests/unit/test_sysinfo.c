// SPDX-License-Identifier: GPL-2.0
/* Kernel release comparisons: which kernels get preallocated per-thread maps (before 6.1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sysinfo.h"

static void releases(void **state)
{
	(void)state;
	assert_false(sysinfo_release_at_least("5.16.0-1-amd64", 6, 1));
	assert_false(sysinfo_release_at_least("6.0.12", 6, 1));
	assert_true(sysinfo_release_at_least("6.1.0-57-amd64", 6, 1));
	assert_true(sysinfo_release_at_least("6.12.117+deb12-amd64", 6, 1));
	assert_true(sysinfo_release_at_least("7.0", 6, 1));
	assert_false(sysinfo_release_at_least("5.19.17", 6, 1));
	/* what it cannot read is taken as new: no preallocation, as before */
	assert_true(sysinfo_release_at_least("unknown", 6, 1));
	assert_true(sysinfo_release_at_least("", 6, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(releases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
