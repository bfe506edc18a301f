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

/* The declared names' hash table: twice the families, so that probes stay short. */
#define PROM_FAMILY_SLOTS (2 * PROM_MAX_FAMILIES)
/* Output is gathered here and written to F in pieces this large: no stdio call per byte. */
#define PROM_BUF_SIZE 16384

struct prom_writer {
	FILE *f;
	int err;	    /* the first rule broken or write failed, -errno */
	const char *family; /* the family whose samples may follow */
	size_t family_len;
	enum prom_type type;
	char *declared[PROM_MAX_FAMILIES]; /* every family announced so far */
	size_t n_declared;
	uint16_t slots[PROM_FAMILY_SLOTS]; /* declared[i] as i + 1, by the name's hash; 0: free */
	char *labels; /* the current series' labels, escaped, without the braces */
	size_t labels_len, labels_cap;
	/* where the text goes first: buf, flushed to F; or the caller's memory (prom_init_mem) */
	char *out;
	size_t len, cap;
	char buf[PROM_BUF_SIZE];
};

void prom_init(struct prom_writer *w, FILE *f);
/*
 * Into memory rather than a FILE: BUF (malloc()ed, CAP bytes; or NULL, 0),
 * grown as the text needs. A buffer kept from one scrape for the next is
 * neither allocated, nor faulted in, nor copied as it grows again.
 */
void prom_init_mem(struct prom_writer *w, char *buf, size_t cap);
/* 0, or the first error; writes out what is buffered, frees what the writer kept. */
int prom_finish(struct prom_writer *w);
/*
 * prom_finish() of a prom_init_mem() writer: 0 and the text in *TEXT, *LEN
 * bytes and a NUL, in a malloc()ed buffer of *CAP bytes, now the caller's;
 * or the first error, the buffer freed and *TEXT NULL.
 */
int prom_finish_mem(struct prom_writer *w, char **text, size_t *len, size_t *cap);

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
