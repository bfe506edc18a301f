/* SPDX-License-Identifier: GPL-2.0 */
/* The kvmmmu CSV format, version 3 (docs/csv.md): one observation per row. */
#ifndef KVMMMU_CSV_H
#define KVMMMU_CSV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CSV_MAGIC "# kvmmmu-csv 3"
#define CSV_HEADER "ts,pid,comm,vcpu,source,metric,le,value,vm,vm_index"
/* Versions 2 and 1, still read: the same without vm_index, and without vm too. */
#define CSV_MAGIC_V2 "# kvmmmu-csv 2"
#define CSV_HEADER_V2 "ts,pid,comm,vcpu,source,metric,le,value,vm"
#define CSV_MAGIC_V1 "# kvmmmu-csv 1"
#define CSV_HEADER_V1 "ts,pid,comm,vcpu,source,metric,le,value"
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
	const char *vm; /* the VM's name (its -name, ...), NULL: none (v2) */
	int vm_index;	/* which of the process's VMs (1: its first); 0: none, empty */
};

/*
 * Rows collect in memory and reach the file a batch at a time, in one
 * write(2) each (csv_writer_flush): a tracer killed at any moment leaves
 * whole rows and whole reports, never half a row.
 */
struct csv_writer {
	FILE *f;    /* the batch being written (a memory stream) */
	char *buf;  /* its buffer */
	size_t len; /* its length, as of the last fflush */
	int fd;	    /* where batches go */
	bool owns_fd;
};

/*
 * Opens PATH ("-" is stdout) and writes the magic line, metadata and header
 * through to it at once: a path that opens but refuses writes (a full disk,
 * /dev/full) is found now, not after a run.
 */
int csv_writer_open(struct csv_writer *w, const char *path, const struct csv_meta *meta);
/* Same, onto an open descriptor that stays the caller's (used by tests). */
int csv_writer_start(struct csv_writer *w, int fd, const struct csv_meta *meta);
int csv_write_row(struct csv_writer *w, const struct csv_row *row);
/* Writes the rows so far in one go; -errno (-ENOSPC, -EPIPE, ...) if they could not be. */
int csv_writer_flush(struct csv_writer *w);
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
	/* integers (counters, bucket counts) exactly as written, up to 2^64 - 1 */
	enum csv_value_kind kind;
	uint64_t u64;
	double value;	  /* the value as a double, for either kind */
	char *value_text; /* CSV_F64: the value as written ("1e3"), for messages; else NULL */
	char *vm;	  /* the VM's name; NULL when empty, or in a v1 file */
	int vm_index;	  /* which of the process's VMs; 0 when empty, 1 before v3 */
	long line;	  /* line number in the file, for messages */
};

struct csv_table {
	int version; /* 1, 2 or 3 */
	struct csv_meta_kv *meta;
	size_t n_meta;
	struct csv_record *rows;
	size_t n_rows;
};

/*
 * Parses a whole v1, v2 or v3 file. On malformed input returns -EINVAL and writes
 * "line N: reason" into ERR.
 */
int csv_read_stream(FILE *f, struct csv_table *t, char *err, size_t err_len);
int csv_read_file(const char *path, struct csv_table *t, char *err, size_t err_len);
const char *csv_table_meta(const struct csv_table *t, const char *key);
void csv_table_free(struct csv_table *t);

#endif
