// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the strict command-line value parsers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "parse.h"

static void size_suffixes(void **state)
{
	static const struct {
		const char *in;
		uint64_t bytes;
	} ok[] = {
		{"0", 0},
		{"4096", 4096},
		{"2k", 2048},
		{"64M", 64ULL << 20},
		{"64MiB", 64ULL << 20},
		{"64mb", 64ULL << 20},
		{"1G", 1ULL << 30},
		{"3T", 3ULL << 40},
		{"512B", 512},
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(parse_size(ok[i].in, &v), 0);
		assert_int_equal(v, ok[i].bytes);
	}
}

static void size_rejects(void **state)
{
	static const char *bad[] = {"", "M", "-1", "1.5G", "64X", "64 M", "64MM", "64iB", " 1"};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_size(bad[i], &v), -EINVAL);
	assert_int_equal(parse_size("99999999999999999999", &v), -ERANGE);
	assert_int_equal(parse_size("17179869184G", &v), -ERANGE);
}

static void u64_range(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(parse_u64_range("2", 1, 8, &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(parse_u64_range("0", 1, 8, &v), -ERANGE);
	assert_int_equal(parse_u64_range("9", 1, 8, &v), -ERANGE);
	assert_int_equal(parse_u64_range("2x", 1, 8, &v), -EINVAL);
	assert_int_equal(parse_u64_range("-2", 0, 8, &v), -EINVAL);
	assert_int_equal(parse_u64_range("", 0, 8, &v), -EINVAL);
}

static void seconds(void **state)
{
	double s;

	(void)state;
	assert_int_equal(parse_seconds("2", &s), 0);
	assert_true(s == 2.0);
	assert_int_equal(parse_seconds("0.25", &s), 0);
	assert_true(s == 0.25);
	assert_int_equal(parse_seconds("0", &s), -ERANGE);
	assert_int_equal(parse_seconds("1s", &s), -EINVAL);
	assert_int_equal(parse_seconds("nan", &s), -EINVAL);
	assert_int_equal(parse_seconds("-1", &s), -EINVAL);
	/* decimals only, as every number option takes them: no exponent, no hex */
	assert_int_equal(parse_seconds("1e300", &s), -EINVAL);
	assert_int_equal(parse_seconds("1e3", &s), -EINVAL);
	assert_int_equal(parse_seconds("0x10", &s), -EINVAL);
	assert_int_equal(parse_seconds("0x1p4", &s), -EINVAL);
	assert_int_equal(parse_seconds("infinity", &s), -EINVAL);
	assert_int_equal(parse_seconds(" 2", &s), -EINVAL);
	assert_int_equal(parse_seconds("+2", &s), -EINVAL);
	assert_int_equal(parse_seconds(".", &s), -EINVAL);
	assert_int_equal(parse_seconds("1.2.3", &s), -EINVAL);
	assert_int_equal(parse_seconds("1.", &s), 0);
	assert_true(s == 1.0);
	/* bounded both ways: a huge window once compared nothing */
	assert_int_equal(
		parse_seconds("1000000000000000000000000000000000000000000000000000000000000000000"
			      "0000000000000000000000000000000000000000000000000000000000000000000"
			      "0000000000000000000000000000000000000000000000000000000000000000000"
			      "0000000000000000000000000000000000000000000000000000000000000000000"
			      "0000000000000000000000000000000000000000000000000000000000000000000",
			      &s),
		-ERANGE);
	assert_int_equal(parse_seconds("31622401", &s), -ERANGE);
	assert_int_equal(parse_seconds("31622400", &s), 0);
	assert_int_equal(parse_seconds("0.0009", &s), -ERANGE);
	assert_int_equal(parse_seconds("0.001", &s), 0);
}

static void millis(void **state)
{
	uint64_t ns;

	(void)state;
	assert_int_equal(parse_millis_ns("10", &ns), 0);
	assert_true(ns == 10000000);
	assert_int_equal(parse_millis_ns("0.5", &ns), 0);
	assert_true(ns == 500000);
	assert_int_equal(parse_millis_ns(".001", &ns), 0);
	assert_true(ns == 1000);
	assert_int_equal(parse_millis_ns("0", &ns), -ERANGE);
	assert_int_equal(parse_millis_ns("0.0001", &ns), -ERANGE);
	assert_int_equal(parse_millis_ns("3600001", &ns), -ERANGE);
	assert_int_equal(parse_millis_ns("5ms", &ns), -EINVAL);
	assert_int_equal(parse_millis_ns("-1", &ns), -EINVAL);
	assert_int_equal(parse_millis_ns("inf", &ns), -EINVAL);
	/* what --sample 0x10 always refused, --slower refuses too */
	assert_int_equal(parse_millis_ns("0x10", &ns), -EINVAL);
	assert_int_equal(parse_millis_ns("1e1", &ns), -EINVAL);
	assert_int_equal(parse_millis_ns("", &ns), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(size_suffixes), cmocka_unit_test(size_rejects),
		cmocka_unit_test(u64_range),	 cmocka_unit_test(seconds),
		cmocka_unit_test(millis),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
