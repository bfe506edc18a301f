// SPDX-License-Identifier: GPL-2.0
/*
 * The CSV reader under arbitrary input, shared by the libFuzzer target
 * (tests/fuzz/fuzz_csv.c, make fuzz) and the corpus replay among the unit
 * tests (tests/unit/test_csv_corpus.c). Included by both, hence static.
 *
 * Whatever the bytes: no crash, no leak, no read out of bounds (the
 * sanitizers say so), and the reader's contract holds: a table it accepts
 * is whole and consistent; one it refuses comes with a one-line reason.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "target_check.h"

static void csv_target_accepted(const struct csv_table *t)
{
	long last_line = 0;

	TARGET_CHECK(t->version == 1 || t->version == 2);
	TARGET_CHECK(!t->n_rows || t->rows);
	for (size_t i = 0; i < t->n_meta; i++)
		TARGET_CHECK(t->meta[i].key && t->meta[i].value);
	for (size_t i = 0; i < t->n_rows; i++) {
		const struct csv_record *r = &t->rows[i];

		TARGET_CHECK(r->comm && r->source && r->metric);
		TARGET_CHECK(r->line > last_line);
		last_line = r->line;
		/* integers are kept exactly, and their double is the nearest one */
		if (r->kind == CSV_U64)
			TARGET_CHECK(r->value == (double)r->u64);
		TARGET_CHECK(t->version == 2 || !r->vm);
	}
	(void)csv_table_meta(t, "version");
}

static int csv_target(const uint8_t *data, size_t size)
{
	struct csv_table t;
	char err[256] = "";
	FILE *f;
	int rc;

	/* a copy, so that a read past the input is a read past a heap block */
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	/* fmemopen() refuses an empty buffer */
	f = size ? fmemopen(copy, size, "r") : fopen("/dev/null", "r");
	if (!f) {
		free(copy);
		return 0;
	}
	rc = csv_read_stream(f, &t, err, sizeof(err));
	fclose(f);
	if (!rc) {
		csv_target_accepted(&t);
		csv_table_free(&t);
	} else {
		TARGET_CHECK(rc == -EINVAL || rc == -ERANGE || rc == -ENOMEM || rc == -EIO);
		/* the reason: one line, said */
		TARGET_CHECK(memchr(err, '\0', sizeof(err)) && !strchr(err, '\n'));
		TARGET_CHECK(rc == -ENOMEM || err[0]);
	}
	free(copy);
	return 0;
}
