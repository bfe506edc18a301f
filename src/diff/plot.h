/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DIFF_PLOT_H
#define KVMMMU_DIFF_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "derive.h"

#define MAX_RUNS 64

/* One side of the comparison: its name (A, B, N, Y, ...) and its runs. */
struct side {
	char name[32];
	struct run runs[MAX_RUNS];
	size_t n;
};

/* K's histogram (a latency figure) summed over S's runs. */
void side_pool(const struct side *s, const struct scalar *k, struct kvmmmu_hist *h);
/*
 * --plot PATH (.png or .svg) with gnuplot: per VM, each latency figure's
 * distribution on both sides as CDFs on a log time axis, and the outcome
 * and path shares side by side. 0, or -errno after one line on stderr.
 */
/*
 * Whether PATH can be plotted to: it ends in .png or .svg and its folder is
 * there and writable; else why not, in WHY. Checked before any file is read.
 */
bool diff_plot_path_ok(const char *path, char *why, size_t len);
int diff_plot(const char *path, const struct side *a, const struct side *b);

#endif
