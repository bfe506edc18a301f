/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DIFF_COMPARE_H
#define KVMMMU_DIFF_COMPARE_H

/*
 * The rows of a comparison: every (VM, vCPU, figure) of any side's runs,
 * each side's values (none where a side lacks it), medians, and each later
 * side's change from the first and its U test, as benchstat compares every
 * column with its first.
 */
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "side.h"

/* Runs a side a row needs to be tested: 4 and 4 give p >= 0.029, 3 and 3 never below 0.1. */
#define MIN_TESTED_RUNS 4

struct diff_row {
	const struct scalar *key; /* from the first run that has it, the first side's first */
	double *v;		  /* every run's value, side by side: diff_values() */
	size_t n[MAX_SIDES];
	double median[MAX_SIDES];
	double p[MAX_SIDES]; /* side s against the first (s >= 1); 1 where untested */
	bool tested[MAX_SIDES], same_bucket[MAX_SIDES];
};

struct diff {
	struct side **sides;
	size_t n_sides;
	size_t off[MAX_SIDES], runs; /* a side's first value in diff_row.v; all runs */
	struct diff_row *rows;
	size_t n_rows, cap;
	size_t tests;	 /* (row, later side) pairs tested */
	size_t compared; /* rows on two sides or more: the others are one side's alone */
	bool matched;	 /* the filter matched some figure */
};

/*
 * Builds D's rows from its sides (FILTER: only metrics it matches, or NULL)
 * and tests them, Holm-Bonferroni across every test when HOLM. 0 or -ENOMEM.
 */
int diff_build(struct diff *d, struct side **sides, size_t n_sides, const regex_t *filter,
	       bool holm);
void diff_free(struct diff *d);
/* Side S's values of R, R->n[S] of them. */
static inline const double *diff_values(const struct diff *d, const struct diff_row *r, size_t s)
{
	return r->v + d->off[s];
}
/* Side S's change from the first side, in %: +inf from 0, 0 from 0 to 0. */
double diff_delta(const struct diff_row *r, size_t s);
/*
 * Whether side S moved R: significantly where tested, by its median where
 * not; never where S or the first side lacks R (no verdict).
 */
bool diff_changed(const struct diff_row *r, size_t s, double alpha);

#endif
