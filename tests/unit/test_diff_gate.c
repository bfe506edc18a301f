// SPDX-License-Identifier: GPL-2.0
/* kvmmmu-diff --fail-on: what a gate's text means, and when a change trips it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gate.h"

static void parses_thresholds(void **state)
{
	struct diff_gate g;
	char why[128];

	(void)state;
	assert_true(diff_gate_parse(&g, "fault_ns p99:+10%", why, sizeof(why)));
	assert_int_equal(g.dir, 1);
	assert_float_equal(g.pct, 10, 0);
	assert_true(diff_gate_matches(&g, "fault_ns p99"));
	assert_false(diff_gate_matches(&g, "fault_ns p50"));
	diff_gate_free(&g);
	assert_true(diff_gate_parse(&g, "^faults$:-2.5%", why, sizeof(why)));
	assert_int_equal(g.dir, -1);
	assert_float_equal(g.pct, 2.5, 0);
	diff_gate_free(&g);
	assert_true(diff_gate_parse(&g, "faults:5%", why, sizeof(why)));
	assert_int_equal(g.dir, 0);
	diff_gate_free(&g);
	/* no threshold: a rise of any size */
	assert_true(diff_gate_parse(&g, "fault_ns p99", why, sizeof(why)));
	assert_int_equal(g.dir, 1);
	assert_float_equal(g.pct, 0, 0);
	diff_gate_free(&g);
	/* a ':' that starts no threshold is the regex's */
	assert_true(diff_gate_parse(&g, "a:b", why, sizeof(why)));
	assert_true(diff_gate_matches(&g, "a:b"));
	diff_gate_free(&g);
}

static void refuses_what_it_cannot_mean(void **state)
{
	static const char *const bad[] = {"faults:+10",	 "faults:10%%",	 "faults:+%",
					  "faults:1e3%", "faults:+inf%", ":+10%",
					  "(:+10%",	 "faults:--5%",	 "faults:"};
	struct diff_gate g;
	char why[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_false(diff_gate_parse(&g, bad[i], why, sizeof(why)));
		assert_true(why[0] != '\0');
	}
}

static void trips_past_its_threshold_only(void **state)
{
	struct diff_gate g;
	char why[128];

	(void)state;
	assert_true(diff_gate_parse(&g, "x:+10%", why, sizeof(why)));
	assert_true(diff_gate_trips(&g, 10.5, false, false));
	assert_false(diff_gate_trips(&g, 10, false, false));
	assert_false(diff_gate_trips(&g, -50, false, false));
	assert_true(diff_gate_trips(&g, INFINITY, false, false)); /* from 0 */
	/* tested: only a significant change counts */
	assert_false(diff_gate_trips(&g, 40, true, false));
	assert_true(diff_gate_trips(&g, 40, true, true));
	diff_gate_free(&g);
	assert_true(diff_gate_parse(&g, "x:-10%", why, sizeof(why)));
	assert_true(diff_gate_trips(&g, -11, false, false));
	assert_false(diff_gate_trips(&g, 11, false, false));
	diff_gate_free(&g);
	assert_true(diff_gate_parse(&g, "x:10%", why, sizeof(why)));
	assert_true(diff_gate_trips(&g, -11, false, false));
	assert_true(diff_gate_trips(&g, 11, false, false));
	assert_false(diff_gate_trips(&g, 9, false, false));
	assert_false(diff_gate_trips(&g, 0, false, false));
	diff_gate_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_thresholds),
		cmocka_unit_test(refuses_what_it_cannot_mean),
		cmocka_unit_test(trips_past_its_threshold_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
