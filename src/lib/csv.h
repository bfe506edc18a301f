/* SPDX-License-Identifier: GPL-2.0 */
/* The kvmmmu CSV format, version 1 (docs/csv.md): one observation per row. */
#ifndef KVMMMU_CSV_H
#define KVMMMU_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CSV_MAGIC "# kvmmmu-csv 1"
#define CSV_HEADER "ts,pid,comm,vcpu,source,metric,le,value"
#define CSV_NO_VCPU (-1)

/* Metadata every writer records; NULL members are left out. */
struct csv_meta {
	const char *label;	  /* --label, free form */
	const char *command_line; /* argv joined with spaces */
	const char *tool;	  /* "kvmmmu-load", "kvmmmu-hist", ... */
};

enum csv_value_kind {
	CSV_U64,
	CSV_F64,
};

struct csv_row {
	double ts; /* seconds since the epoch */
	int pid;
	const char *comm;
	int vcpu;	    /* CSV_NO_VCPU for VM-wide rows */
	const char *source; /* "kvm_stats", "load", "bpf" */
	const char *metric;
	const char *le; /* histogram bucket bound, NULL otherwise */
	enum csv_value_kind kind;
	uint64_t u64;
	double f64;
};

struct csv_writer {
	FILE *f;
	bool owns_file;
};

/* Opens PATH ("-" is stdout) and writes the magic line, metadata and header. */
int csv_writer_open(struct csv_writer *w, const char *path, const struct csv_meta *meta);
/* Same, on an already open stream (used by tests and by in-memory writers). */
int csv_writer_start(struct csv_writer *w, FILE *f, const struct csv_meta *meta);
int csv_write_row(struct csv_writer *w, const struct csv_row *row);
/* Flushes and closes; returns -errno if anything written was lost. */
int csv_writer_close(struct csv_writer *w);

/* Writes FIELD quoted per RFC 4180 when it holds a comma, quote, CR or LF. */
void csv_write_field(FILE *f, const char *field);

/* ---- reading ---- */

struct csv_meta_kv {
	char *key;
	char *value;
};

struct csv_record {
	double ts;
	int pid;
	char *comm;
	int vcpu; /* CSV_NO_VCPU when empty */
	char *source;
	char *metric;
	char *le; /* NULL when empty */
	double value;
	long line; /* line number in the file, for messages */
};

struct csv_table {
	struct csv_meta_kv *meta;
	size_t n_meta;
	struct csv_record *rows;
	size_t n_rows;
};

/*
 * Parses a whole v1 file. On malformed input returns -EINVAL and writes
 * "line N: reason" into ERR.
 */
int csv_read_stream(FILE *f, struct csv_table *t, char *err, size_t err_len);
int csv_read_file(const char *path, struct csv_table *t, char *err, size_t err_len);
const char *csv_table_meta(const struct csv_table *t, const char *key);
void csv_table_free(struct csv_table *t);

#endif
