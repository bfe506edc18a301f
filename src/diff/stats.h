/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DIFF_STATS_H
#define KVMMMU_DIFF_STATS_H

/*
 * The statistics kvmmmu-diff reports, as benchstat does: medians, the
 * Mann-Whitney U test between two sets of runs, Holm-Bonferroni across
 * rows; and for histograms, interpolated quantiles and the Wasserstein-1
 * distance on log2(latency). Pure functions, checked against scipy.
 */
#include <stddef.h>
#include <stdbool.h>

#include <linux/types.h>

#include "kvmmmu_hist.h"

double stats_median(const double *x, size_t n);
/* The largest |x - median| / median, in percent: benchstat's "±" (0 when the median is 0). */
double stats_spread_pct(const double *x, size_t n);
/*
 * Two-sided p-value of the Mann-Whitney U test of A (NA values) against B
 * (NB): exact (ties: mid-ranks, exact over the tied ranks' permutations)
 * for up to 16 a side, the normal approximation with tie correction above.
 */
double stats_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb);
/* The smallest p-value the U test can give with NA and NB runs a side (4 and 4: 0.029). */
double stats_min_p(size_t na, size_t nb);
/* Holm-Bonferroni: P[N] adjusted in place (monotone, capped at 1). */
void stats_holm(double *p, size_t n);
/* The value below which a fraction Q of H's samples fall, interpolated within its bucket. */
double stats_hist_quantile(const struct kvmmmu_hist *h, double q);
/* The bucket the Q quantile of H falls in (for "within one bucket"). */
int stats_hist_quantile_bucket(const struct kvmmmu_hist *h, double q);
/* Wasserstein-1 distance between A's and B's distributions on log2(ns), buckets as weights. */
double stats_wasserstein_log2(const struct kvmmmu_hist *a, const struct kvmmmu_hist *b);

#endif
