// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "array.h"
#include "stats.h"

/* The quantile a figure's name asks of its histogram ("fault_ns p99": 0.99), or -1. */
static double quantile_of(const char *metric)
{
	static const struct {
		const char *suffix;
		double q;
	} qs[] = {{" p50", 0.5}, {" p90", 0.9}, {" p99", 0.99}, {" p99.9", 0.999}};
	size_t n = strlen(metric);

	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		size_t k = strlen(qs[i].suffix);

		if (n > k && !strcmp(metric + n - k, qs[i].suffix))
			return qs[i].q;
	}
	return -1;
}

/* A row for S with every side's values of it: a side without it has none (n 0). 0 or -ENOMEM. */
static int add_row(struct diff *d, const struct scalar *s)
{
	struct diff_row *r = array_grow(d->rows, d->n_rows + 1, &d->cap, sizeof(*d->rows));
	size_t sides = 0;

	if (!r)
		return -ENOMEM;
	d->rows = r;
	r = &d->rows[d->n_rows];
	memset(r, 0, sizeof(*r));
	r->key = s;
	r->v = malloc(d->runs * sizeof(*r->v));
	if (!r->v)
		return -ENOMEM;
	for (size_t k = 0; k < d->n_sides; k++) {
		const struct side *side = d->sides[k];

		for (size_t x = 0; x < side->n; x++) {
			const struct scalar *v =
				run_find(&side->runs[x], s->vm, s->vcpu, s->metric);

			if (v)
				r->v[d->off[k] + r->n[k]++] = v->value;
		}
		sides += r->n[k] > 0;
	}
	d->compared += sides > 1;
	d->n_rows++;
	return 0;
}

/* Whether S, of side K's run I, is a row already: that run had it before, or an earlier run. */
static bool seen_before(struct side **sides, size_t k, size_t i, const struct scalar *s)
{
	if (run_find(&sides[k]->runs[i], s->vm, s->vcpu, s->metric) != s)
		return true;
	for (size_t x = 0; x <= k; x++)
		for (size_t y = 0; y < (x < k ? sides[x]->n : i); y++)
			if (run_find(&sides[x]->runs[y], s->vm, s->vcpu, s->metric))
				return true;
	return false;
}

static void test_row(struct diff *d, struct diff_row *r)
{
	double q = quantile_of(r->key->metric);
	struct kvmmmu_hist h0, h;

	for (size_t k = 0; k < d->n_sides; k++)
		r->median[k] = stats_median(diff_values(d, r, k), r->n[k]);
	if (q >= 0 && r->key->hist)
		side_pool(d->sides[0], r->key, &h0);
	for (size_t k = 1; k < d->n_sides; k++) {
		/* as the header says: fewer runs cannot reach alpha 0.05 (3 and 3: p >= 0.1) */
		r->tested[k] = r->n[0] >= MIN_TESTED_RUNS && r->n[k] >= MIN_TESTED_RUNS;
		r->p[k] = r->tested[k] ? stats_mann_whitney_p(diff_values(d, r, 0), r->n[0],
							      diff_values(d, r, k), r->n[k])
				       : 1;
		d->tests += r->tested[k];
		if (q >= 0 && r->key->hist && r->n[0] && r->n[k]) {
			side_pool(d->sides[k], r->key, &h);
			r->same_bucket[k] = stats_hist_quantile_bucket(&h0, q) ==
					    stats_hist_quantile_bucket(&h, q);
		}
	}
}

/* Holm-Bonferroni over every test of every row and later side. */
static int holm(struct diff *d)
{
	double *p = malloc((d->tests ? d->tests : 1) * sizeof(*p));
	size_t n = 0;

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_rows; i++)
		for (size_t k = 1; k < d->n_sides; k++)
			if (d->rows[i].tested[k])
				p[n++] = d->rows[i].p[k];
	stats_holm(p, n);
	n = 0;
	for (size_t i = 0; i < d->n_rows; i++)
		for (size_t k = 1; k < d->n_sides; k++)
			if (d->rows[i].tested[k])
				d->rows[i].p[k] = p[n++];
	free(p);
	return 0;
}

int diff_build(struct diff *d, struct side **sides, size_t n_sides, const regex_t *filter,
	       bool holm_adjust)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->sides = sides;
	d->n_sides = n_sides;
	for (size_t k = 0; k < n_sides; k++) {
		d->off[k] = d->runs;
		d->runs += sides[k]->n;
	}
	/*
	 * rows: every (VM, vCPU, metric) of any side's runs, once, the first
	 * side's first: a VM one side lacks is shown, its absence too
	 */
	for (size_t k = 0; k < n_sides; k++)
		for (size_t i = 0; i < sides[k]->n; i++) {
			const struct run *run = &sides[k]->runs[i];

			for (size_t j = 0; j < run->n; j++) {
				const struct scalar *s = &run->s[j];

				if (filter && regexec(filter, s->metric, 0, NULL, 0))
					continue;
				d->matched = true;
				if (!seen_before(sides, k, i, s) && (err = add_row(d, s)))
					return err;
			}
		}
	for (size_t i = 0; i < d->n_rows; i++)
		test_row(d, &d->rows[i]);
	return holm_adjust ? holm(d) : 0;
}

void diff_free(struct diff *d)
{
	for (size_t i = 0; i < d->n_rows; i++)
		free(d->rows[i].v);
	free(d->rows);
	d->rows = NULL;
	d->n_rows = 0;
}

double diff_delta(const struct diff_row *r, size_t s)
{
	if (r->median[0])
		return 100 * (r->median[s] - r->median[0]) / fabs(r->median[0]);
	return r->median[s] ? copysign(INFINITY, r->median[s]) : 0;
}

bool diff_changed(const struct diff_row *r, size_t s, double alpha)
{
	if (!r->n[0] || !r->n[s])
		return false; /* on one side only: nothing to compare, no change */
	return r->tested[s] ? r->p[s] < alpha : r->median[s] != r->median[0];
}
