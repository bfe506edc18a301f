// SPDX-License-Identifier: GPL-2.0
/*
 * The catalogue of figures (include/kvmmmu_metrics.h, src/core/catalogue.c):
 * every name unique across counters, histograms, MMU counters and health
 * fields (CSV finds figures by name), every figure helped, Prometheus names
 * well formed and each family written once, and docs/csv.md's table the
 * catalogue's own. With --doc it prints that table (make docs puts it in).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "render_prom.h"

#define DOC_BEGIN "<!-- catalogue: make docs writes this table from include/kvmmmu_metrics.h -->\n"
#define DOC_END "<!-- end of catalogue -->\n"

static void doc_table(FILE *f)
{
	fputs(DOC_BEGIN, f);
	fputs("| metric | what it is | also in (from its catalogue line) |\n|---|---|---|\n", f);
	for (int i = 0; i < KVMMMU_N_COUNTERS; i++) {
		unsigned int show = kvmmmu_counter_show[i];

		fprintf(f, "| `%s` | %s |", kvmmmu_counter_names[i], kvmmmu_counter_help[i]);
		if (show & KVMMMU_SHOW_EVENTS)
			fputs(" text report's `events:` line", f);
		if ((show & KVMMMU_SHOW_PROM) && kvmmmu_counter_prom[i])
			fprintf(f, "%s Prometheus `%s`", show & KVMMMU_SHOW_EVENTS ? "," : "",
				kvmmmu_counter_prom[i]);
		if (show & KVMMMU_SHOW_DIFF)
			fprintf(f, "%s kvmmmu-diff's `%s per fault`",
				show & (KVMMMU_SHOW_EVENTS | KVMMMU_SHOW_PROM) ? "," : "",
				kvmmmu_counter_names[i]);
		fputs(" |\n", f);
	}
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		fprintf(f, "| `%s` | latency histogram: %s |%s |\n", kvmmmu_hist_names[h],
			kvmmmu_hist_help[h], kvmmmu_hist_words[h] ? "" : " off unless asked for");
	for (int k = 0; k < KVMMMU_N_MMU_COUNTERS; k++) {
		fprintf(f, "| `%s` | %s |", kvmmmu_mmu_counter_names[k],
			kvmmmu_mmu_counter_help[k]);
		if (kvmmmu_mmu_counter_prom[k])
			fprintf(f, " Prometheus `%s`", kvmmmu_mmu_counter_prom[k]);
		fputs(" |\n", f);
	}
	fputs(DOC_END, f);
}

static void names_unique(void **state)
{
	const char *
		names[KVMMMU_N_COUNTERS + KVMMMU_N_HISTS + KVMMMU_N_MMU_COUNTERS + N_HEALTH_FIELDS];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < KVMMMU_N_COUNTERS; i++)
		names[n++] = kvmmmu_counter_names[i];
	for (int i = 0; i < KVMMMU_N_HISTS; i++)
		names[n++] = kvmmmu_hist_names[i];
	for (int i = 0; i < KVMMMU_N_MMU_COUNTERS; i++)
		names[n++] = kvmmmu_mmu_counter_names[i];
	for (int i = 0; i < N_HEALTH_FIELDS; i++)
		names[n++] = health_fields[i].metric;
	for (size_t i = 0; i < n; i++) {
		assert_non_null(names[i]);
		/* a Prometheus-safe word that starts with a letter (level_installed_2m) */
		assert_true(names[i][0] >= 'a' && names[i][0] <= 'z' &&
			    strspn(names[i], "abcdefghijklmnopqrstuvwxyz_0123456789") ==
				    strlen(names[i]));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				fail_msg("%s twice in the catalogue", names[i]);
	}
}

static bool prom_name_ok(const char *p)
{
	size_t n = strlen(p);

	return !strncmp(p, "kvmmmu_", 7) && n > 13 && !strcmp(p + n - 6, "_total");
}

static void helped_and_named(void **state)
{
	(void)state;
	for (int i = 0; i < KVMMMU_N_COUNTERS; i++) {
		assert_true(kvmmmu_counter_help[i] && strlen(kvmmmu_counter_help[i]) > 10);
		if (kvmmmu_counter_show[i] & KVMMMU_SHOW_PROM)
			assert_true(kvmmmu_counter_prom[i] && prom_name_ok(kvmmmu_counter_prom[i]));
		else /* a family nothing writes would be a promise broken */
			assert_null(kvmmmu_counter_prom[i]);
	}
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		assert_true(kvmmmu_hist_help[h] && strlen(kvmmmu_hist_help[h]) > 10);
	for (int k = 0; k < KVMMMU_N_MMU_COUNTERS; k++) {
		assert_true(kvmmmu_mmu_counter_help[k] && strlen(kvmmmu_mmu_counter_help[k]) > 10);
		if (kvmmmu_mmu_counter_prom[k])
			assert_true(prom_name_ok(kvmmmu_mmu_counter_prom[k]));
	}
}

/* Every family the catalogue names is written, once, by a snapshot that has the figures. */
static void families_written_once(void **state)
{
	struct snapshot s = {.events_ok = true, .sample_every = 1};
	struct prom_writer w;
	struct prom_opts o;
	char *buf = NULL, want[160];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(model_vm(&s.m, 100, 1));
	prom_opts_default(&o);
	prom_init(&w, f);
	render_prom(&w, &s, NULL, &o);
	assert_int_equal(prom_finish(&w), 0);
	fclose(f);
	for (int k = 0; k < KVMMMU_N_MMU_COUNTERS + KVMMMU_N_COUNTERS; k++) {
		const char *p = k < KVMMMU_N_MMU_COUNTERS
					? kvmmmu_mmu_counter_prom[k]
					: kvmmmu_counter_prom[k - KVMMMU_N_MMU_COUNTERS];
		const char *at;

		if (!p)
			continue;
		snprintf(want, sizeof(want), "# TYPE %s counter\n", p);
		at = strstr(buf, want);
		if (!at || strstr(at + 1, want))
			fail_msg("%s: written %s", p, at ? "twice" : "never");
	}
	free(buf);
	snapshot_free(&s);
}

/* docs/csv.md's table is the catalogue's (make docs rewrites it). */
static void docs_table_current(void **state)
{
	char *doc = NULL, *want = NULL, *begin, *end;
	size_t len = 0, wlen = 0;
	FILE *f = fopen("docs/csv.md", "r"), *w = open_memstream(&want, &wlen);

	(void)state;
	assert_non_null(f);
	assert_non_null(w);
	assert_true(getdelim(&doc, &len, '\0', f) > 0);
	fclose(f);
	doc_table(w);
	fclose(w);
	begin = strstr(doc, DOC_BEGIN);
	end = begin ? strstr(begin, DOC_END) : NULL;
	if (!begin || !end)
		fail_msg("docs/csv.md has no catalogue table (make docs)");
	end += strlen(DOC_END);
	if ((size_t)(end - begin) != strlen(want) || strncmp(begin, want, strlen(want)))
		fail_msg("docs/csv.md's catalogue table is not the catalogue's: run make docs");
	free(doc);
	free(want);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_unique),
		cmocka_unit_test(helped_and_named),
		cmocka_unit_test(families_written_once),
		cmocka_unit_test(docs_table_current),
	};

	if (argc > 1 && !strcmp(argv[1], "--doc")) {
		doc_table(stdout);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
