// SPDX-License-Identifier: GPL-2.0
/* Names someone else chose, as a terminal or a CSV reader gets them (text_escape). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "text_escape.h"

static void check(const char *in, bool utf8, const char *want)
{
	char *got = text_escape(in, utf8);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* valid UTF-8 kept where the locale writes it, escaped byte by byte where not */
static void test_utf8(void **state)
{
	(void)state;
	check("w\303\251b", true, "w\303\251b");
	check("w\303\251b", false, "w\\xc3\\xa9b");
	check("\xe4\xb8\xad\xf0\x9f\x98\x80", true, "\xe4\xb8\xad\xf0\x9f\x98\x80");
	check("plain-ascii_1.2", true, "plain-ascii_1.2");
}

/* C0, DEL and C1, line separators and bidi overrides: escaped in either mode */
static void test_controls(void **state)
{
	(void)state;
	check("a\rb\nc\x1b[31m\x07\x7f", true, "a\\x0db\\x0ac\\x1b[31m\\x07\\x7f");
	check("c1\xc2\x9b", true, "c1\\xc2\\x9b");
	check("x\xe2\x80\xaey\xe2\x80\xa8", true, "x\\xe2\\x80\\xaey\\xe2\\x80\\xa8");
	check("back\\slash", true, "back\\\\slash");
}

/* invalid UTF-8: stray, overlong, surrogate, past U+10FFFF, cut short */
static void test_invalid(void **state)
{
	(void)state;
	check("a\xff", true, "a\\xff");
	check("\xc0\xaf", true, "\\xc0\\xaf");
	check("\xe0\x80\xaf", true, "\\xe0\\x80\\xaf");
	check("\xed\xa0\x80", true, "\\xed\\xa0\\x80");
	check("\xf4\x90\x80\x80", true, "\\xf4\\x90\\x80\\x80");
	check("cut\xe4\xb8", true, "cut\\xe4\\xb8");
	check("\xc3", true, "\\xc3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
