/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_TOP_TABLE_H
#define KVMMMU_TOP_TABLE_H

/*
 * kvmmmu-top's table: one row per VM (or per vCPU of one VM), computed from
 * two snapshots, with the columns the running kernel can fill. Pure: the
 * screen and the batch output draw it, the unit tests check it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "snapshot.h"

enum top_col {
	COL_NAME,
	COL_PID,
	COL_VCPUS, /* VM rows: its vCPUs; vCPU rows: the vCPU id */
	COL_FAULTS,
	COL_FIXED,
	COL_SPURIOUS,
	COL_EMULATE,
	COL_RETRY,
	COL_WRITE_PROTECTED,
	COL_FAST,
	COL_TDP,
	COL_SHADOW,
	COL_DIRECT,
	COL_P50,
	COL_P99,
	COL_MAX,
	COL_LOCK,
	COL_MEMSLOT,
	COL_ZAPPED,
	COL_DIRTY,
	N_TOP_COLS,
};

enum top_sort {
	SORT_FAULTS,
	SORT_NAME,
	SORT_PID,
	SORT_P99,
	SORT_LOCK,
	N_TOP_SORTS,
};

struct top_row {
	char name[64]; /* escaped, cut to fit with a '~' */
	int pid;
	int vm_index; /* which of the process's VMs */
	int vcpu;     /* -1: a VM row */
	bool gone;
	double v[N_TOP_COLS]; /* numeric columns; < 0: nothing to show ("-") */
};

struct top_table {
	bool have[N_TOP_COLS];	     /* columns this kernel and these probes can fill */
	const char *why[N_TOP_COLS]; /* ... and why the others cannot be (static text) */
	const char *latency;	     /* which histogram the latency columns are of */
	bool since_start;	     /* counts, not rates (since the start, or a reset) */
	double seconds;		     /* the interval (or the whole run) */
	struct top_row *rows;
	size_t n, cap;
	struct top_row total;
	/* the since-start counts of VMs no longer in the snapshots: in TOTAL (NULL: none) */
	const struct figures *exited;
};

/*
 * The rows of CUR since REF (NULL: since tracing started), DT seconds
 * apart: every VM, or with VM_PID > 0 the vCPUs of VM VM_INDEX of process
 * VM_PID. Rates per second, or with COUNTS the counts themselves. 0, or
 * -ENOMEM.
 */
int top_table_build(struct top_table *t, const struct snapshot *cur, const struct snapshot *prev,
		    double dt, bool counts, int vm_pid, int vm_index);
void top_table_sort(struct top_table *t, enum top_sort key, bool invert);
void top_table_free(struct top_table *t);

const char *top_col_header(const struct top_table *t, enum top_col c);
int top_col_width(enum top_col c);
/* Cell text of column C (WIDTH characters at most). */
void top_cell(const struct top_table *t, const struct top_row *r, enum top_col c, char *buf,
	      size_t len);
const char *top_sort_name(enum top_sort key);
int top_sort_parse(const char *s, enum top_sort *key);
/* One plain-text frame: a header line, then the rows and the totals (batch mode). */
void top_print_table(FILE *f, const struct top_table *t);

#endif
