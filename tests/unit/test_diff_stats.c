// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-diff's statistics against an independent implementation: the
 * expected values come from scipy 1.10.1 (Debian 12's python3-scipy),
 * scipy.stats.mannwhitneyu(a, b, alternative='two-sided').pvalue and
 * scipy.stats.wasserstein_distance(u, v, u_weights, v_weights);
 * tests/integration/test_diff.sh also compares with scipy live.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "stats.h"

#define N(x) (sizeof(x) / sizeof((x)[0]))

static void mann_whitney_like_scipy(void **state)
{
	static const double a1[] = {1, 2, 3, 4}, b1[] = {5, 6, 7, 8};
	static const double a3[] = {8193, 8193, 8193, 8193}, b3[] = {16385, 16385, 16385, 16385};
	static const double a4[] = {1.5, 2.5, 3.1, 0.2, 9.0},
			    b4[] = {2.2, 4.4, 6.6, 8.8, 10.1, 12.0};
	static const double a5[] = {3, 3, 4, 5, 5, 6, 7, 8, 9, 10},
			    b5[] = {1, 2, 3, 3, 4, 4, 5, 6, 6, 7};
	static const double a6[] = {10, 20, 30}, b6[] = {15, 25, 35, 45};
	double a7[20], b7[20];

	(void)state;
	for (int i = 0; i < 20; i++) {
		a7[i] = i + 1;
		b7[i] = i + 5.5;
	}
	/* exact (no ties, a side of at most 8) */
	assert_float_equal(stats_mann_whitney_p(a1, N(a1), b1, N(b1)), 0.02857142857142857, 1e-12);
	assert_float_equal(stats_mann_whitney_p(a4, N(a4), b4, N(b4)), 0.12554112554112554, 1e-12);
	assert_float_equal(stats_mann_whitney_p(a6, N(a6), b6, N(b6)), 0.4, 1e-12);
	/* identical sides */
	assert_float_equal(stats_mann_whitney_p(a1, N(a1), a1, N(a1)), 1.0, 1e-12);
	/*
	 * ties: the normal approximation with tie and continuity corrections
	 * (scipy: 0.0131 for a3/b3), floored at what the two most extreme
	 * orderings give, 2 / C(8, 4): no permutation of 4 and 4 runs goes below
	 */
	assert_float_equal(stats_mann_whitney_p(a3, N(a3), b3, N(b3)), 0.02857142857142857, 1e-12);
	assert_float_equal(stats_mann_whitney_p(a5, N(a5), b5, N(b5)), 0.10929776111269558, 1e-12);
	/* more than 8 a side */
	assert_float_equal(stats_mann_whitney_p(a7, 20, b7, 20), 0.03151710207456157, 1e-12);
	/* the floor with 4 runs a side: why Holm over two rows hides everything */
	assert_float_equal(stats_min_p(4, 4), 0.02857142857142857, 1e-12);
	assert_float_equal(stats_min_p(1, 1), 1.0, 1e-12);
}

static void holm(void **state)
{
	double p[] = {0.01, 0.04, 0.03, 0.005, 0.2};

	(void)state;
	stats_holm(p, N(p));
	/* ranks 0.005 0.01 0.03 0.04 0.2 times 5 4 3 2 1, kept monotone */
	assert_float_equal(p[3], 0.025, 1e-12);
	assert_float_equal(p[0], 0.04, 1e-12);
	assert_float_equal(p[2], 0.09, 1e-12);
	assert_float_equal(p[1], 0.09, 1e-12);
	assert_float_equal(p[4], 0.2, 1e-12);
}

static void median_and_spread(void **state)
{
	static const double x[] = {4, 1, 3, 2}, y[] = {10, 12, 8};

	(void)state;
	assert_float_equal(stats_median(x, 4), 2.5, 1e-12);
	assert_float_equal(stats_median(y, 3), 10, 1e-12);
	assert_float_equal(stats_spread_pct(y, 3), 20, 1e-12);
}

static void histogram_quantiles(void **state)
{
	struct kvmmmu_hist h = {};
	__u32 b = kvmmmu_hist_slot(1000);
	double lo = (double)kvmmmu_hist_slot_low(b), hi = (double)kvmmmu_hist_slot_high(b) + 1;

	(void)state;
	h.slots[b] = 100;
	h.count = 100;
	/* histogram_quantile: linear within the bucket */
	assert_float_equal(stats_hist_quantile(&h, 0.5), lo + (hi - lo) * 0.5, 1e-9);
	assert_float_equal(stats_hist_quantile(&h, 0.99), lo + (hi - lo) * 0.99, 1e-9);
	assert_int_equal(stats_hist_quantile_bucket(&h, 0.5), (int)b);
	/* never above the slowest fault seen, though the bucket reaches further */
	h.max_ns = (__u64)(lo + (hi - lo) * 0.6);
	assert_float_equal(stats_hist_quantile(&h, 0.5), lo + (hi - lo) * 0.5, 1e-9);
	assert_float_equal(stats_hist_quantile(&h, 0.99), (double)h.max_ns, 1e-9);
}

static void wasserstein(void **state)
{
	struct kvmmmu_hist a = {}, b = {};

	(void)state;
	/* all of A one doubling below all of B: exactly 1 doubling apart */
	a.slots[kvmmmu_hist_slot(1 << 12)] = 10;
	b.slots[kvmmmu_hist_slot(1 << 13)] = 10;
	a.count = b.count = 10;
	assert_true(stats_wasserstein_log2(&a, &a) == 0);
	assert_float_equal(stats_wasserstein_log2(&a, &b), 1.0, 0.15); /* bucket centres */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mann_whitney_like_scipy),
		cmocka_unit_test(holm),
		cmocka_unit_test(median_and_spread),
		cmocka_unit_test(histogram_quantiles),
		cmocka_unit_test(wasserstein),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
