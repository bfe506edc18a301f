/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DIFF_DERIVE_H
#define KVMMMU_DIFF_DERIVE_H

/*
 * The scalars people compare, derived from one run (one CSV file, read as a
 * snapshot): per VM by name, VM-wide and per vCPU. Keys join runs: the VM's
 * name, not its pid, which differs between runs.
 */
#include <stdbool.h>
#include <stddef.h>

#include "csv.h"
#include "snapshot.h"
#include "vm_keys.h"

struct scalar {
	char vm[VM_KEY_MAX]; /* the VM's key: its name, or "NAME #I" (vm_keys.h) */
	int vcpu;	     /* -1: VM-wide */
	char metric[64];
	double value;
	const struct kvmmmu_hist *hist; /* for latency figures: the histogram it comes from */
	bool key;			/* a key figure: always shown */
};

struct run {
	char *path; /* its own copy: the argument it came from is freed */
	struct csv_table table;
	struct snapshot snap;
	struct scalar *s;
	size_t n, cap;
	/* open addressing over s by (VM, vCPU, metric): run_find in O(1), 8,000 VMs a side */
	size_t *index; /* s's position + 1; 0: empty */
	size_t index_cap;
};

/* Reads PATH and derives its scalars; on error says why in ERR (one line) and returns -errno. */
int run_load(struct run *r, const char *path, char *err, size_t err_len);
void run_free(struct run *r);
/* R's scalar for (VM, VCPU, METRIC), or NULL (after run_load: through the index). */
const struct scalar *run_find(const struct run *r, const char *vm, int vcpu, const char *metric);

#endif
