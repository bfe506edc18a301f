// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

#define EXACT_MAX 8 /* scipy's 'auto': exact when a side has at most 8 runs and nothing ties */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double stats_median(const double *x, size_t n)
{
	double *s, m;

	if (!n)
		return 0;
	s = malloc(n * sizeof(*s));
	if (!s)
		return x[0];
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

double stats_spread_pct(const double *x, size_t n)
{
	double m = stats_median(x, n), worst = 0;

	for (size_t i = 0; i < n; i++)
		if (fabs(x[i] - m) > worst)
			worst = fabs(x[i] - m);
	return m ? 100 * worst / fabs(m) : 0;
}

/* Ways to get each U with M and N values: counts[u], u = 0..M*N (the exact null distribution). */
static double *u_counts(size_t m, size_t n)
{
	size_t max = m * n;
	/* f[i][j][u] by rows: f(i, j, u) = f(i - 1, j, u - j) + f(i, j - 1, u) */
	double *f = calloc((m + 1) * (n + 1) * (max + 1), sizeof(*f));
	double *out;

#define F(i, j, u) f[((i) * (n + 1) + (j)) * (max + 1) + (u)]
	if (!f)
		return NULL;
	for (size_t i = 0; i <= m; i++)
		for (size_t j = 0; j <= n; j++) {
			if (!i || !j) {
				F(i, j, 0) = 1;
				continue;
			}
			for (size_t u = 0; u <= i * j; u++)
				F(i, j, u) = (u >= j ? F(i - 1, j, u - j) : 0) + F(i, j - 1, u);
		}
	out = malloc((max + 1) * sizeof(*out));
	if (out)
		memcpy(out, &F(m, n, 0), (max + 1) * sizeof(*out));
#undef F
	free(f);
	return out;
}

double stats_min_p(size_t na, size_t nb)
{
	double c = 1;

	/* 2 / C(na + nb, na): the two most extreme orderings */
	for (size_t i = 1; i <= na; i++)
		c = c * (double)(nb + i) / (double)i;
	return fmin(1, 2 / c);
}

double stats_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb)
{
	size_t n = na + nb;
	struct {
		double v;
		bool from_a;
	} *all = malloc(n * sizeof(*all));
	double r1 = 0, ties = 0, u1, u2, u, p;
	bool tied = false;

	if (!all || !na || !nb) {
		free(all);
		return 1;
	}
	for (size_t i = 0; i < na; i++)
		all[i].v = a[i], all[i].from_a = true;
	for (size_t i = 0; i < nb; i++)
		all[na + i].v = b[i], all[na + i].from_a = false;
	/* sort by value (insertion sort: a few runs a side) */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && all[j - 1].v > all[j].v; j--) {
			__typeof__(*all) t = all[j];

			all[j] = all[j - 1];
			all[j - 1] = t;
		}
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double rank;

		while (j + 1 < n && all[j + 1].v == all[i].v)
			j++;
		rank = (double)(i + j) / 2 + 1; /* mid-rank of the tied group */
		for (size_t k = i; k <= j; k++)
			if (all[k].from_a)
				r1 += rank;
		if (j > i) {
			double t = (double)(j - i + 1);

			tied = true;
			ties += t * t * t - t;
		}
		i = j + 1;
	}
	free(all);
	u1 = r1 - (double)na * (double)(na + 1) / 2;
	u2 = (double)na * (double)nb - u1;
	u = fmax(u1, u2);
	if (!tied && (na <= EXACT_MAX || nb <= EXACT_MAX)) {
		double *c = u_counts(na, nb), total = 0, upper = 0;

		if (c) {
			for (size_t k = 0; k <= na * nb; k++) {
				total += c[k];
				if ((double)k >= u)
					upper += c[k];
			}
			free(c);
			return fmin(1, 2 * upper / total);
		}
	}
	/* the normal approximation, with the tie correction and a continuity correction */
	{
		double mu = (double)na * (double)nb / 2;
		double s = sqrt((double)na * (double)nb / 12 *
				((double)(n + 1) - ties / ((double)n * (double)(n - 1))));

		if (s <= 0)
			return 1;
		p = erfc((u - mu - 0.5) / s / sqrt(2));
	}
	/*
	 * No ordering of these runs is more extreme than the two where one side
	 * is all below the other: with ties and few runs, the approximation can
	 * go below what any permutation gives (p=0.013 with 4 and 4).
	 */
	return fmin(1, fmax(p, stats_min_p(na, nb)));
}

void stats_holm(double *p, size_t n)
{
	size_t *order = malloc(n * sizeof(*order));
	double running = 0;

	if (!order)
		return;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && p[order[j - 1]] > p[order[j]]; j--) {
			size_t t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t k = 0; k < n; k++) {
		double adj = fmin(1, (double)(n - k) * p[order[k]]);

		running = fmax(running, adj); /* adjusted p-values never decrease with rank */
		p[order[k]] = running;
	}
	free(order);
}

int stats_hist_quantile_bucket(const struct kvmmmu_hist *h, double q)
{
	double rank = q * (double)h->count, seen = 0;

	if (!h->count)
		return -1;
	for (__u32 b = 0; b < KVMMMU_HIST_BUCKETS; b++) {
		seen += (double)h->slots[b];
		if (h->slots[b] && seen >= rank)
			return (int)b;
	}
	return KVMMMU_HIST_BUCKETS - 1;
}

double stats_hist_quantile(const struct kvmmmu_hist *h, double q)
{
	int b = stats_hist_quantile_bucket(h, q);
	double rank = q * (double)h->count, before = 0, lo, hi, v;

	if (b < 0)
		return 0;
	for (int k = 0; k < b; k++)
		before += (double)h->slots[k];
	lo = (double)kvmmmu_hist_slot_low((__u32)b);
	if (b == KVMMMU_HIST_BUCKETS - 1)
		return lo; /* unbounded above: its lower bound, as histogram_quantile does */
	hi = (double)kvmmmu_hist_slot_high((__u32)b) + 1;
	v = lo + (hi - lo) * (rank - before) / (double)h->slots[b];
	/* the interpolation can pass the slowest fault seen: no percentile is above it */
	return h->max_ns && v > (double)h->max_ns ? (double)h->max_ns : v;
}

/* Where bucket B's mass sits on the log2 axis: its geometric middle. */
static double log2_point(__u32 b)
{
	double lo = (double)kvmmmu_hist_slot_low(b), hi;

	if (b == KVMMMU_HIST_BUCKETS - 1)
		return log2(lo > 1 ? lo : 1);
	hi = (double)kvmmmu_hist_slot_high(b) + 1;
	return (log2(lo > 1 ? lo : 1) + log2(hi)) / 2;
}

double stats_wasserstein_log2(const struct kvmmmu_hist *a, const struct kvmmmu_hist *b)
{
	double ca = 0, cb = 0, fa = 0, fb = 0, w = 0, ta = 0, tb = 0;

	for (__u32 k = 0; k < KVMMMU_HIST_BUCKETS; k++) {
		ta += (double)a->slots[k];
		tb += (double)b->slots[k];
	}
	if (!ta || !tb)
		return 0;
	/* the area between the two CDFs, bucket point to bucket point */
	for (__u32 k = 0; k + 1 < KVMMMU_HIST_BUCKETS; k++) {
		ca += (double)a->slots[k];
		cb += (double)b->slots[k];
		fa = ca / ta;
		fb = cb / tb;
		w += fabs(fa - fb) * (log2_point(k + 1) - log2_point(k));
	}
	return w;
}
