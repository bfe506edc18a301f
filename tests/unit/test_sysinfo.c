// SPDX-License-Identifier: GPL-2.0
/* Kernel release comparisons (which kernels get preallocated per-thread maps), fd counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>
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

/*
 * Linux 6.2 and later say how many fds a process has in its /proc/PID/fd's
 * size; older kernels say 0, which means "not told", never "none".
 */
static void open_fds(void **state)
{
	struct utsname u;
	long long before, mine, after;
	int fds[3];

	(void)state;
	assert_int_equal(uname(&u), 0);
	before = sysinfo_open_fds(0);
	for (int i = 0; i < 3; i++)
		assert_true((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
	after = sysinfo_open_fds(0);
	mine = sysinfo_open_fds(getpid());
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	if (!sysinfo_release_at_least(u.release, 6, 2)) {
		assert_int_equal(before, 0);
		assert_int_equal(after, 0);
		return;
	}
	assert_true(before >= 3); /* stdin, stdout, stderr at least */
	assert_int_equal(after, before + 3);
	assert_int_equal(mine, after);
	assert_int_equal(sysinfo_open_fds(-1), 0); /* no such process */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(releases),
		cmocka_unit_test(open_fds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
