/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DIFF_PLOT_H
#define KVMMMU_DIFF_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "side.h"

/*
 * Whether PATH can be plotted to: it ends in .png or .svg and its folder is
 * there and writable; else why not, in WHY. Checked before any file is read.
 */
bool diff_plot_path_ok(const char *path, char *why, size_t len);
/*
 * --plot PATH (.png or .svg) with gnuplot: per VM, each latency figure's
 * distribution on every side as CDFs on a log time axis, and the outcome
 * and path shares side by side. 0, or -errno after one line on stderr.
 */
int diff_plot(const char *path, struct side *const *sides, size_t n_sides);

#endif
