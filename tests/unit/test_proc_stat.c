// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/stat lines as kvmmmu reads them: a COMM with spaces and ')' included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "proc_stat.h"

static void reads_the_fields(void **state)
{
	/* a real line (this machine's kvmmmu-exporter), its COMM made hostile */
	static const char line[] =
		"4242 (kvm) mmu (x)) S 1 4242 4242 0 -1 4194560 1234 0 0 0 153 27 0 0 20 0 3 0 "
		"987654 123456789 4321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 "
		"0\n";
	struct proc_stat st;

	(void)state;
	assert_true(proc_stat_parse(line, &st));
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.utime, 153);
	assert_int_equal(st.stime, 27);
	assert_int_equal(st.starttime, 987654);
	assert_int_equal(st.vsize, 123456789);
	assert_int_equal(st.rss, 4321);
}

static void refuses_what_is_not_one(void **state)
{
	struct proc_stat st;

	(void)state;
	assert_false(proc_stat_parse("", &st));
	assert_false(proc_stat_parse("4242 (kvm", &st));
	assert_false(proc_stat_parse("4242 (kvm) S 1 2 3", &st)); /* cut short */
	assert_false(proc_stat_parse("4242 (kvm)S 1", &st));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_the_fields),
		cmocka_unit_test(refuses_what_is_not_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
