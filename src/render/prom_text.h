/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus text exposition format (version 0.0.4), as a writer that
 * keeps its rules: every family announced once, by "# HELP" and "# TYPE",
 * before its samples; a family's samples together; metric and label names
 * checked; label values and help text escaped; histograms with cumulative
 * buckets, "le" ascending, "+Inf" equal to "_count". Debian has no
 * maintained Prometheus client library for C, hence this. A rule broken is
 * an error (prom_error), not a malformed scrape.
 */
#ifndef KVMMMU_PROM_TEXT_H
#define KVMMMU_PROM_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/types.h>

#include "kvmmmu_hist.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_MAX_FAMILIES 256

enum prom_type {
	PROM_COUNTER,
	PROM_GAUGE,
	PROM_HISTOGRAM,
};

struct prom_label {
	const char *name;
	const char *value;
};

struct prom_writer {
	FILE *f;
	int err;	    /* the first rule broken or write failed, -errno */
	const char *family; /* the family whose samples may follow */
	enum prom_type type;
	char *declared[PROM_MAX_FAMILIES]; /* every family announced so far */
	size_t n_declared;
};

void prom_init(struct prom_writer *w, FILE *f);
/* 0, or the first error; frees what the writer kept. */
int prom_finish(struct prom_writer *w);

/* Announces family NAME: "# HELP NAME HELP" and "# TYPE NAME TYPE". Once per NAME. */
void prom_family(struct prom_writer *w, const char *name, enum prom_type type, const char *help);
/* One sample of the current counter or gauge family. */
void prom_u64(struct prom_writer *w, const struct prom_label *labels, size_t n_labels,
	      uint64_t value);
void prom_double(struct prom_writer *w, const struct prom_label *labels, size_t n_labels,
		 double value);
/*
 * One histogram of the current histogram family, in seconds, from kvmmmu's
 * log-linear nanosecond buckets folded at powers of two: "le" from 2^10 - 1
 * ns (about 1 us) to 2^35 - 1 ns (about 34 s), then "+Inf". Each bound is the
 * largest value its buckets hold, so no sample is counted under a bound it
 * exceeds.
 */
void prom_histogram(struct prom_writer *w, const struct prom_label *labels, size_t n_labels,
		    const struct kvmmmu_hist *h);

/* Whether NAME is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or label name (no ':'). */
int prom_valid_name(const char *name, int label);

#endif
