/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DIFF_REPORT_H
#define KVMMMU_DIFF_REPORT_H

/*
 * kvmmmu-diff's report of a comparison: text as benchstat prints it (a
 * column a side, each later side's change from the first beside it), or
 * CSV, one row a figure.
 */
#include <stdbool.h>
#include <stdio.h>

#include "compare.h"

struct report_opts {
	double alpha;
	bool holm, all;
	bool utf8; /* the locale writes UTF-8: names in UTF-8 shown as they are (text_escape) */
};

/* "VM web-1" or "VM web-1 vCPU 0" for KEY, its name escaped (text_escape), into BUF. */
const char *report_place(char *buf, size_t len, const struct scalar *key, bool utf8);
void report_text(FILE *f, const struct diff *d, const struct report_opts *o);
void report_csv(FILE *f, const struct diff *d, const struct report_opts *o);

#endif
