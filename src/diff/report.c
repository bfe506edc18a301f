// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "csv.h"
#include "stats.h"
#include "vm_name.h"

/*
 * R's metadata KEY, escaped: whoever recorded the file chose it, and no
 * escape sequence of theirs reaches a terminal. In one of a few rotating
 * buffers: valid for the next few calls, enough for one line.
 */
static const char *meta(const struct run *r, const char *key)
{
	static char bufs[6][512];
	static unsigned int next;
	const char *v = csv_table_meta(&r->table, key);
	char *shown, *buf = bufs[next++ % 6];

	if (!v)
		return "?";
	shown = vm_name_escape(v);
	snprintf(buf, sizeof(bufs[0]), "%s", shown ? shown : "?");
	free(shown);
	return buf;
}

/*
 * The workload a run measured, as comparable text: what followed "--" in a
 * tracer's command line, or kvmmmu-load's own, without the options that
 * name its output (--csv FILE, --label TEXT), which differ from run to run.
 */
static void workload(const struct run *r, char *buf, size_t len)
{
	const char *c = csv_table_meta(&r->table, "command") ? meta(r, "command") : NULL, *w, *end,
		   *base;
	char *copy, *tok, *save;
	size_t used = 0;
	bool skip = false;

	buf[0] = '\0';
	if (!c)
		return;
	end = strchrnul(c, ' '); /* the program, by its file name */
	base = memrchr(c, '/', (size_t)(end - c));
	w = strstr(c, " -- ");
	if (w)
		w += 4;
	else if (end - (base ? base + 1 : c) == 11 &&
		 !strncmp(base ? base + 1 : c, "kvmmmu-load", 11))
		w = c; /* kvmmmu-load's own CSV: its command line is the workload */
	else
		return; /* -p PID or NAME: a VM not started by us, no command known */
	copy = strdup(w);
	for (tok = copy ? strtok_r(copy, " ", &save) : NULL; tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (skip) {
			skip = false;
			continue;
		}
		if (!strcmp(tok, "--csv") || !strcmp(tok, "--label")) {
			skip = true;
			continue;
		}
		if (!strncmp(tok, "--csv=", 6) || !strncmp(tok, "--label=", 8))
			continue;
		if (used + 1 >= len)
			break; /* cut: long enough to tell workloads apart */
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "", tok);
		used = used < len ? used : len - 1;
	}
	free(copy);
}

/* Warns when a side's runs, or a later side and the first, measured different workloads. */
static void warn_workloads(FILE *f, const struct diff *d)
{
	char first[MAX_SIDES][512], w[512];

	for (size_t k = 0; k < d->n_sides; k++) {
		const struct side *s = d->sides[k];

		workload(&s->runs[0], first[k], sizeof(first[k]));
		for (size_t i = 1; i < s->n; i++) {
			workload(&s->runs[i], w, sizeof(w));
			if (strcmp(w, first[k])) {
				fprintf(f,
					"warning: the runs of %s measured different workloads "
					"('%s', '%s')\n",
					s->name, first[k], w);
				break;
			}
		}
	}
	for (size_t k = 1; k < d->n_sides; k++)
		if (strcmp(first[0], first[k]))
			fprintf(f,
				"warning: the sides measured different workloads (%s '%s', %s "
				"'%s')\n",
				d->sides[0]->name, first[0][0] ? first[0] : "?", d->sides[k]->name,
				first[k][0] ? first[k] : "?");
}

/* Warns where a later side differs from the first in META (KEY), as nobody intends. */
static void warn_meta(FILE *f, const struct diff *d, const char *key, const char *what)
{
	const char *first = meta(&d->sides[0]->runs[0], key);

	for (size_t k = 1; k < d->n_sides; k++)
		if (strcmp(first, meta(&d->sides[k]->runs[0], key))) {
			fprintf(f, "warning: the sides %s (%s %s, %s %s)\n", what,
				d->sides[0]->name, first, d->sides[k]->name,
				meta(&d->sides[k]->runs[0], key));
			return;
		}
}

/* Each side's metadata, what was tested, and warnings. */
static void print_header(FILE *f, const struct diff *d, const struct report_opts *o)
{
	size_t n0 = d->sides[0]->n, fewest = SIZE_MAX, tested = 0, testable = 0;
	char short_sides[MAX_SIDES * (SIDE_NAME_MAX + 2)] = "";

	for (size_t k = 0; k < d->n_sides; k++) {
		const struct side *s = d->sides[k];
		const struct run *r = &s->runs[0];

		fprintf(f, "%s: %zu run%s; kernel %s, tdp_mmu=%s, host %s, tool %s, label '%s'\n",
			s->name, s->n, s->n == 1 ? "" : "s", meta(r, "kernel"), meta(r, "tdp_mmu"),
			meta(r, "hostname"), meta(r, "tool"), meta(r, "label"));
		if (!k)
			continue;
		/* the later sides that can be tested against the first, and those that cannot */
		if (s->n >= MIN_TESTED_RUNS) {
			testable++;
			fewest = s->n < fewest ? s->n : fewest;
		} else {
			size_t used = strlen(short_sides);

			snprintf(short_sides + used, sizeof(short_sides) - used, "%s%s",
				 used ? ", " : "", s->name);
		}
	}
	for (size_t i = 0; i < d->n_rows; i++)
		for (size_t k = 1; k < d->n_sides; k++)
			if (d->rows[i].tested[k]) {
				tested++;
				break;
			}
	warn_meta(f, d, "hostname", "ran on different hosts");
	warn_meta(f, d, "tool", "come from different commands");
	warn_workloads(f, d);
	if (n0 < MIN_TESTED_RUNS || !testable) {
		fprintf(f,
			"%zu rows; with %zu and %zu runs only deltas are shown: significance needs "
			"at least 4 runs a side\n",
			d->n_rows, n0,
			n0 < MIN_TESTED_RUNS ? d->sides[1]->n : d->sides[d->n_sides - 1]->n);
	} else {
		fprintf(f,
			"%zu rows tested (Mann-Whitney U, alpha %.3g%s)%s; the smallest p-value "
			"%zu and %zu runs can give: %.3g\n",
			tested, o->alpha, o->holm ? ", Holm-Bonferroni across them" : "",
			d->n_sides > 2 ? ", each side against the first" : "", n0, fewest,
			stats_min_p(n0, fewest));
		if (short_sides[0])
			fprintf(f,
				"%s: fewer than 4 runs, only deltas are shown (significance needs "
				"at "
				"least 4 runs a side)\n",
				short_sides);
	}
	if (o->holm && d->tests) {
		size_t need = 2;

		/* Holm's strictest step: the best p-value times the tests */
		while (need < 64 && stats_min_p(need, need) * (double)d->tests >= o->alpha)
			need++;
		fprintf(f,
			"with Holm over %zu tests, a change shows only with %zu runs a side or "
			"more\n",
			d->tests, need);
	}
}

/* A compact number: 12.3k, 4.56M. */
static const char *human(char *buf, size_t len, double v)
{
	static const char *const units[] = {"", "k", "M", "G", "T"};
	int u = 0;

	while (fabs(v) >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, fabs(v) >= 100 || v == (long)v ? "%.0f%s" : "%.3g%s", v, units[u]);
	return buf;
}

/* A side's column: "4.1k ±  3%", "±   ∞" from one run (benchstat's), "-" with none. */
static void print_side(FILE *f, const struct diff *d, const struct diff_row *r, size_t k)
{
	char x[32];

	if (!r->n[k]) {
		fprintf(f, " %9s      ", "-");
		return;
	}
	fprintf(f, " %9s ", human(x, sizeof(x), r->median[k]));
	if (r->n[k] < 2)
		fprintf(f, "±   ∞");
	else
		fprintf(f, "±%3.0f%%", stats_spread_pct(diff_values(d, r, k), r->n[k]));
}

/* A later side's change and test: "+12.5%  (p=0.029 n=4+4)", "~  (p=...)", "+3.0%". */
static const char *change_text(char *buf, size_t len, const struct diff_row *r, size_t k,
			       double alpha)
{
	int n = 0;

	buf[0] = '\0';
	if (r->n[k] && !r->tested[k])
		n = snprintf(buf, len, "%+8.1f%%", diff_delta(r, k));
	else if (r->n[k] && r->p[k] < alpha)
		n = snprintf(buf, len, "%+8.1f%%  (p=%.3f n=%zu+%zu)", diff_delta(r, k), r->p[k],
			     r->n[0], r->n[k]);
	else if (r->n[k])
		n = snprintf(buf, len, "%8s  (p=%.3f n=%zu+%zu)", "~", r->p[k], r->n[0], r->n[k]);
	if (r->same_bucket[k] && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "  within one bucket");
	return buf;
}

/* Each later side's geomean change over every latency figure (one unit: time), or "". */
static const char *geomean_text(char *buf, size_t len, const struct diff *d, size_t k)
{
	double logsum = 0;
	size_t n = 0;

	/* whether its row is shown or not */
	for (size_t i = 0; i < d->n_rows; i++) {
		const struct diff_row *r = &d->rows[i];

		if (r->key->hist && r->median[0] > 0 && r->median[k] > 0) {
			logsum += log(r->median[k] / r->median[0]);
			n++;
		}
	}
	if (n)
		snprintf(buf, len, "%+8.1f%%  (%zu latency figures)",
			 100 * (exp(logsum / (double)n) - 1), n);
	else
		snprintf(buf, len, "%9s", "n/a");
	return n ? buf : "";
}

static bool row_shown(const struct diff *d, const struct diff_row *r, const struct report_opts *o)
{
	if (o->all || r->key->key)
		return true;
	for (size_t k = 1; k < d->n_sides; k++)
		if (diff_changed(r, k, o->alpha))
			return true;
	return false;
}

/* "VM web-1" and the columns' names, or "VM web-1 vCPU 0". */
const char *report_place(char *buf, size_t len, const struct scalar *key)
{
	/* a name is the VMM's to choose: no escape sequence reaches the terminal */
	char *shown = vm_name_escape(key->vm);

	if (key->vcpu >= 0)
		snprintf(buf, len, "VM %s vCPU %d", shown ?: "?", key->vcpu);
	else
		snprintf(buf, len, "VM %s", shown ?: "?");
	free(shown);
	return buf;
}

static void print_section(FILE *f, const struct diff *d, const struct scalar *key, const int *width)
{
	char place[4 * sizeof(key->vm) + 32];

	fprintf(f, "\n%s\n", report_place(place, sizeof(place), key));
	if (key->vcpu >= 0)
		return;
	fprintf(f, "  %-32s %15s", "", d->sides[0]->name);
	for (size_t k = 1; k < d->n_sides; k++)
		fprintf(f, " %15s  %8s%*s", d->sides[k]->name, "delta",
			k + 1 < d->n_sides ? width[k] - 8 : 0, "");
	fputc('\n', f);
}

static void print_geomean(FILE *f, const struct diff *d, const int *width)
{
	bool any = false;
	char buf[96];

	fprintf(f, "\n  %-32s %15s", "geomean", "");
	for (size_t k = 1; k < d->n_sides; k++) {
		any |= *geomean_text(buf, sizeof(buf), d, k) != '\0';
		if (!buf[0])
			snprintf(buf, sizeof(buf), "%9s", "n/a");
		fprintf(f, " %15s  %-*s", "", k + 1 < d->n_sides ? width[k] : 0, buf);
	}
	fprintf(f, any ? "\n" : "  (no latency figure on both sides)\n");
}

/* Each latency figure's whole distribution: how far each later side moved from the first. */
static void print_shifts(FILE *f, const struct diff *d)
{
	for (size_t i = 0; i < d->n_rows; i++) {
		const struct diff_row *r = &d->rows[i];
		size_t len = strlen(r->key->metric);
		struct kvmmmu_hist h0, h;
		char who[96], *shown;

		if (!r->key->hist || len < 5 || strcmp(r->key->metric + len - 5, " mean"))
			continue;
		shown = vm_name_escape(r->key->vm);
		if (r->key->vcpu >= 0)
			snprintf(who, sizeof(who), "%s vCPU %d", shown ?: "?", r->key->vcpu);
		else
			snprintf(who, sizeof(who), "%s", shown ?: "?");
		free(shown);
		side_pool(d->sides[0], r->key, &h0);
		for (size_t k = 1; k < d->n_sides; k++) {
			if (!r->n[k])
				continue;
			side_pool(d->sides[k], r->key, &h);
			fprintf(f,
				"  %s %.*s: %s shifted by %.2f doublings from %s (Wasserstein-1 on "
				"log2 ns)\n",
				who, (int)(len - 5), r->key->metric, d->sides[k]->name,
				stats_wasserstein_log2(&h0, &h), d->sides[0]->name);
		}
	}
}

void report_text(FILE *f, const struct diff *d, const struct report_opts *o)
{
	int width[MAX_SIDES] = {};
	const char *vm = NULL;
	int vcpu = -2;
	char buf[96];

	/* a later side's change column, but the last's, as wide as its widest text */
	for (size_t k = 1; k + 1 < d->n_sides; k++) {
		width[k] = (int)strlen(geomean_text(buf, sizeof(buf), d, k));
		width[k] = width[k] > 9 ? width[k] : 9;
		for (size_t i = 0; i < d->n_rows; i++) {
			int w = (int)strlen(
				change_text(buf, sizeof(buf), &d->rows[i], k, o->alpha));

			if (row_shown(d, &d->rows[i], o) && w > width[k])
				width[k] = w;
		}
	}
	print_header(f, d, o);
	for (size_t i = 0; i < d->n_rows; i++) {
		const struct diff_row *r = &d->rows[i];

		if (!row_shown(d, r, o))
			continue;
		if (!vm || strcmp(vm, r->key->vm) || vcpu != r->key->vcpu) {
			vm = r->key->vm;
			vcpu = r->key->vcpu;
			print_section(f, d, r->key, width);
		}
		fprintf(f, "  %-32s", r->key->metric);
		print_side(f, d, r, 0);
		for (size_t k = 1; k < d->n_sides; k++) {
			print_side(f, d, r, k);
			change_text(buf, sizeof(buf), r, k, o->alpha);
			if (k + 1 < d->n_sides)
				fprintf(f, "  %-*s", width[k], buf);
			else if (buf[0])
				fprintf(f, "  %s", buf);
		}
		fputc('\n', f);
	}
	print_geomean(f, d, width);
	print_shifts(f, d);
}

/* ",delta_pct,p,significant" of side K: no p where no test ran, nothing without values */
static void print_csv_change(FILE *f, const struct diff_row *r, size_t k, double alpha)
{
	if (!r->n[k]) {
		fprintf(f, ",,,0");
		return;
	}
	fprintf(f, ",%.6g,", diff_delta(r, k));
	if (r->tested[k])
		fprintf(f, "%.4g", r->p[k]);
	fprintf(f, ",%d", r->tested[k] && r->p[k] < alpha);
}

/*
 * Two sides: vm,vcpu,metric, each side's median, spread and n, then
 * delta_pct,p,significant. More: each later side's own delta_pct, p and
 * significant follow its n, prefixed with its name as its median is.
 */
void report_csv(FILE *f, const struct diff *d, const struct report_opts *o)
{
	bool two = d->n_sides == 2;

	fprintf(f, "vm,vcpu,metric");
	for (size_t k = 0; k < d->n_sides; k++) {
		const char *s = d->sides[k]->name;

		fprintf(f, ",%s_median,%s_spread_pct,%s_n", s, s, s);
		if (k && !two)
			fprintf(f, ",%s_delta_pct,%s_p,%s_significant", s, s, s);
	}
	fprintf(f, two ? ",delta_pct,p,significant\n" : "\n");
	for (size_t i = 0; i < d->n_rows; i++) {
		const struct diff_row *r = &d->rows[i];
		char vc[16] = "";

		if (!row_shown(d, r, o))
			continue;
		if (r->key->vcpu >= 0)
			snprintf(vc, sizeof(vc), "%d", r->key->vcpu);
		csv_write_field(f, r->key->vm);
		fprintf(f, ",%s,", vc);
		csv_write_field(f, r->key->metric);
		for (size_t k = 0; k < d->n_sides; k++) {
			/* one run has no spread (inf); a side without the figure, nothing */
			if (r->n[k])
				fprintf(f, ",%.17g,%.3g,%zu", r->median[k],
					r->n[k] < 2
						? INFINITY
						: stats_spread_pct(diff_values(d, r, k), r->n[k]),
					r->n[k]);
			else
				fprintf(f, ",,,0");
			if (k && !two)
				print_csv_change(f, r, k, o->alpha);
		}
		if (two)
			print_csv_change(f, r, 1, o->alpha);
		fputc('\n', f);
	}
}
