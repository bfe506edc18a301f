/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DIFF_SIDE_H
#define KVMMMU_DIFF_SIDE_H

/*
 * One side of a comparison: its runs (CSV files) and the name its column
 * carries, the user's (NAME=FILES) or, as benchstat does, its file's.
 */
#include <stdbool.h>
#include <stddef.h>

#include "derive.h"

#define MAX_RUNS 64
#define MAX_SIDES 8
#define SIDE_NAME_MAX 31

struct side {
	char name[SIDE_NAME_MAX + 1];
	bool named; /* by the user (NAME=FILES), not after its file */
	struct run runs[MAX_RUNS];
	size_t n;
};

/* side_load()'s answer to an ARG that is no side (a bad name, no files): a usage error */
#define SIDE_USAGE 1

/*
 * Loads ARG, "NAME=f1.csv,f2.csv" or "f1.csv[,f2.csv...]", into S. A side
 * the user did not name is named after its file ("runs/n1.csv": n1) when
 * it has one. 0; or, after one line on stderr, SIDE_USAGE, or -errno for
 * a file it could not read.
 */
int side_load(struct side *s, const char *arg);
/*
 * Gives the unnamed sides of SIDES letters by place (A, B, C, ...) when
 * their files' names would not tell them apart. 0, or -EINVAL after one
 * line on stderr when two sides the user named share a name.
 */
int sides_settle_names(struct side **sides, size_t n);
/*
 * 0; SIDE_USAGE after one line on stderr when one file is a run twice (on
 * one side, or on two): its copies would count as runs, and their
 * agreement as significance; -ENOMEM.
 */
int sides_check_files(struct side **sides, size_t n);
void side_free(struct side *s);
/* K's histogram (a latency figure) summed over S's runs. */
void side_pool(const struct side *s, const struct scalar *k, struct kvmmmu_hist *h);

#endif
