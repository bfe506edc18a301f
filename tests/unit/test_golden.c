// SPDX-License-Identifier: GPL-2.0
/*
 * Every face of recorded runs, byte for byte: real CSVs of the distro-kernel
 * harness (the CSVs in tests/golden: fentry with every part, a QEMU guest by
 * tracepoints, the page-fault-done event, --sample) are read as snapshots
 * and rendered as text, CSV rows and Prometheus families; each must equal
 * its NAME.golden. A change of output is then a change of these files, seen
 * in review; a refactor (issue 23's layers) must leave them alone.
 * KVMMMU_GOLDEN_UPDATE=1 writes them anew.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "csv.h"
#include "prom_text.h"
#include "render.h"
#include "render_prom.h"
#include "snapshot.h"

#define GOLDEN "tests/golden"

/* The CSV rows render_csv writes for SNAP, without the '#' lines (this host's metadata). */
static void csv_face(FILE *out, const struct snapshot *snap)
{
	char path[] = "/tmp/kvmmmu-golden.XXXXXX", line[4096];
	struct csv_writer w;
	int fd = mkstemp(path);
	FILE *in;

	assert_true(fd >= 0);
	assert_int_equal(csv_writer_start(&w, fd, NULL), 0);
	assert_int_equal(render_csv(&w, snap), 0);
	assert_int_equal(csv_writer_close(&w), 0);
	close(fd);
	in = fopen(path, "r");
	assert_non_null(in);
	while (fgets(line, sizeof(line), in))
		if (line[0] != '#')
			fputs(line, out);
	fclose(in);
	unlink(path);
}

/* Every face of the run in PATH, into a malloc()ed buffer. */
static char *faces(const char *path, size_t *len)
{
	struct render_opts o = {.per_vcpu = true, .only_vcpu = -1, .unit_ns = 1, .unit = "nsecs"};
	struct prom_state st = {0};
	struct prom_opts po;
	struct snapshot snap;
	struct csv_table t;
	struct prom_writer w;
	char err[256], *buf = NULL;
	FILE *out = open_memstream(&buf, len);

	assert_non_null(out);
	assert_int_equal(csv_read_file(path, &t, err, sizeof(err)), 0);
	assert_int_equal(snapshot_from_csv(&t, &snap, err, sizeof(err)), 0);
	for (int s = 0; s < N_SECTIONS; s++)
		o.show[s] = true;
	fprintf(out, "==== text\n");
	render_text(out, &snap, NULL, &o);
	fprintf(out, "==== csv\n");
	csv_face(out, &snap);
	fprintf(out, "==== prometheus\n");
	prom_opts_default(&po);
	for (int c = 0; c < PROM_N_COLLECTORS; c++)
		po.collector[c] = true;
	assert_int_equal(prom_state_update(&st, &snap), 0);
	prom_init(&w, out);
	render_prom(&w, &snap, &st, &po);
	assert_int_equal(prom_finish(&w), 0);
	prom_state_free(&st);
	snapshot_free(&snap);
	csv_table_free(&t);
	assert_int_equal(fclose(out), 0);
	return buf;
}

/* The first line where GOT and WANT differ, for the failure message. */
static void first_difference(const char *got, const char *want)
{
	int line = 1;

	while (*got && *got == *want) {
		line += *got == '\n';
		got++;
		want++;
	}
	fprintf(stderr, "# line %d: got '%.*s', want '%.*s'\n", line, (int)strcspn(got, "\n"), got,
		(int)strcspn(want, "\n"), want);
}

static void every_face_as_recorded(void **state)
{
	bool update = getenv("KVMMMU_GOLDEN_UPDATE") != NULL;
	size_t runs = 0, wrong = 0;
	struct dirent *e;
	DIR *d = opendir(GOLDEN);

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name), len, want_len = 0;
		char csv[512], golden[512], *got, *want = NULL;
		FILE *f;

		if (n < 5 || strcmp(e->d_name + n - 4, ".csv"))
			continue;
		snprintf(csv, sizeof(csv), "%s/%s", GOLDEN, e->d_name);
		snprintf(golden, sizeof(golden), "%s/%.*s.golden", GOLDEN, (int)(n - 4), e->d_name);
		got = faces(csv, &len);
		if (update) {
			f = fopen(golden, "w");
			assert_non_null(f);
			assert_int_equal(fwrite(got, 1, len, f), len);
			assert_int_equal(fclose(f), 0);
		}
		f = fopen(golden, "r");
		if (f) {
			FILE *m = open_memstream(&want, &want_len);
			char chunk[65536];
			size_t k;

			while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
				fwrite(chunk, 1, k, m);
			fclose(m);
			fclose(f);
		}
		if (!want || want_len != len || memcmp(got, want, len)) {
			fprintf(stderr, "# %s: not as in %s\n", csv, golden);
			if (want)
				first_difference(got, want);
			wrong++;
		}
		free(got);
		free(want);
		runs++;
	}
	closedir(d);
	printf("# %zu recorded runs rendered\n", runs);
	assert_true(runs >= 4);
	assert_int_equal(wrong, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_face_as_recorded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
