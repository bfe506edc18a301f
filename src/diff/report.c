// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "csv.h"
#include "stats.h"
#include "text_escape.h"

/*
 * R's metadata KEY, escaped: whoever recorded the file chose it, and no
 * escape sequence of theirs reaches a terminal (UTF8: the terminal's
 * locale writes UTF-8). In one of a few rotating buffers: valid for the
 * next few calls, enough for one line.
 */
static const char *meta(const struct run *r, const char *key, bool utf8)
{
	static char bufs[6][512];
	static unsigned int next;
	const char *v = csv_table_meta(&r->table, key);
	char *shown, *buf = bufs[next++ % 6];

	if (!v)
		return "?";
	shown = text_escape(v, utf8);
	snprintf(buf, sizeof(bufs[0]), "%s", shown ? shown : "?");
	free(shown);
	return buf;
}

/*
 * The workload a run measured, as comparable text: what followed "--" in a
 * tracer's command line, or kvmmmu-load's own, without the options that
 * name its output (--csv FILE, --label TEXT), which differ from run to run.
 */
static void workload(const struct run *r, char *buf, size_t len, bool utf8)
{
	const char *c = csv_table_meta(&r->table, "command") ? meta(r, "command", utf8) : NULL, *w,
		   *end, *base;
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
static void warn_workloads(FILE *f, const struct diff *d, bool utf8)
{
	char first[MAX_SIDES][512], w[512];

	for (size_t k = 0; k < d->n_sides; k++) {
		const struct side *s = d->sides[k];

		workload(&s->runs[0], first[k], sizeof(first[k]), utf8);
		for (size_t i = 1; i < s->n; i++) {
			workload(&s->runs[i], w, sizeof(w), utf8);
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
static void warn_meta(FILE *f, const struct diff *d, const char *key, const char *what, bool utf8)
{
	const char *first = meta(&d->sides[0]->runs[0], key, utf8);

	for (size_t k = 1; k < d->n_sides; k++)
		if (strcmp(first, meta(&d->sides[k]->runs[0], key, utf8))) {
			fprintf(f, "warning: the sides %s (%s %s, %s %s)\n", what,
				d->sides[0]->name, first, d->sides[k]->name,
				meta(&d->sides[k]->runs[0], key, utf8));
			return;
		}
}

/* A VM and the sides that have any figure of it. */
struct vm_sides {
	const char *vm;
	size_t first; /* its first row */
	unsigned int sides;
};

static int cmp_vm_sides(const void *a, const void *b)
{
	const struct vm_sides *x = a, *y = b;
	int c = strcmp(x->vm, y->vm);

	return c ? c : x->first < y->first ? -1 : x->first > y->first;
}

static int cmp_first_row(const void *a, const void *b)
{
	const struct vm_sides *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Notes the VMs some side lacks altogether (up to NOTE_LINES): shown, not dropped. */
#define NOTE_LINES 10
static void note_missing_vms(FILE *f, const struct diff *d, bool utf8)
{
	struct vm_sides *v = calloc(d->n_rows ? d->n_rows : 1, sizeof(*v));
	unsigned int all = (1u << d->n_sides) - 1;
	size_t n = 0, said = 0;

	if (!v)
		return; /* the rows still show it */
	for (size_t i = 0; i < d->n_rows; i++) {
		v[i] = (struct vm_sides){d->rows[i].key->vm, i, 0};
		for (size_t k = 0; k < d->n_sides; k++)
			v[i].sides |= d->rows[i].n[k] ? 1u << k : 0;
	}
	qsort(v, d->n_rows, sizeof(*v), cmp_vm_sides);
	for (size_t i = 0; i < d->n_rows; i++) {
		if (n && !strcmp(v[n - 1].vm, v[i].vm))
			v[n - 1].sides |= v[i].sides;
		else
			v[n++] = v[i];
	}
	qsort(v, n, sizeof(*v), cmp_first_row); /* in the report's order */
	for (size_t i = 0; i < n; i++) {
		char *shown, lacking[MAX_SIDES * (SIDE_NAME_MAX + 2)] = "";
		size_t used = 0;

		if (v[i].sides == all || said++ >= NOTE_LINES)
			continue;
		for (size_t k = 0; k < d->n_sides; k++)
			if (!(v[i].sides & 1u << k))
				used += (size_t)snprintf(lacking + used, sizeof(lacking) - used,
							 "%s%s", used ? ", " : "",
							 d->sides[k]->name);
		shown = text_escape(v[i].vm, utf8);
		fprintf(f,
			"VM %s is not in %s: its figures show \"-\" there, compared with nothing\n",
			shown ?: "?", lacking);
		free(shown);
	}
	if (said > NOTE_LINES)
		fprintf(f, "and %zu more VMs not on every side\n", said - NOTE_LINES);
	free(v);
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
			s->name, s->n, s->n == 1 ? "" : "s", meta(r, "kernel", o->utf8),
			meta(r, "tdp_mmu", o->utf8), meta(r, "hostname", o->utf8),
			meta(r, "tool", o->utf8), meta(r, "label", o->utf8));
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
	warn_meta(f, d, "hostname", "ran on different hosts", o->utf8);
	warn_meta(f, d, "tool", "come from different commands", o->utf8);
	warn_workloads(f, d, o->utf8);
	note_missing_vms(f, d, o->utf8);
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
	if (!r->n[0] || !r->n[k])
		return buf; /* on one side only: no change to tell */
	if (!r->tested[k])
		n = snprintf(buf, len, "%+8.1f%%", diff_delta(r, k));
	else if (r->p[k] < alpha)
		n = snprintf(buf, len, "%+8.1f%%  (p=%.3f n=%zu+%zu)", diff_delta(r, k), r->p[k],
			     r->n[0], r->n[k]);
	else
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

		if (r->key->hist && r->n[0] && r->n[k] && r->median[0] > 0 && r->median[k] > 0) {
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
const char *report_place(char *buf, size_t len, const struct scalar *key, bool utf8)
{
	/* a name is the VMM's to choose: no escape sequence reaches the terminal */
	char *shown = text_escape(key->vm, utf8);

	if (key->vcpu >= 0)
		snprintf(buf, len, "VM %s vCPU %d", shown ?: "?", key->vcpu);
	else
		snprintf(buf, len, "VM %s", shown ?: "?");
	free(shown);
	return buf;
}

static void print_section(FILE *f, const struct diff *d, const struct scalar *key, const int *width,
			  bool utf8)
{
	char place[4 * sizeof(key->vm) + 32];

	fprintf(f, "\n%s\n", report_place(place, sizeof(place), key, utf8));
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
static void print_shifts(FILE *f, const struct diff *d, bool utf8)
{
	for (size_t i = 0; i < d->n_rows; i++) {
		const struct diff_row *r = &d->rows[i];
		size_t len = strlen(r->key->metric);
		struct kvmmmu_hist h0, h;
		char who[4 * sizeof(r->key->vm) + 16], *shown;

		if (!r->key->hist || !r->n[0] || len < 5 ||
		    strcmp(r->key->metric + len - 5, " mean"))
			continue;
		shown = text_escape(r->key->vm, utf8);
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

/* A figure's name in its column: kvmmmu-load's come from its file, escaped as VM names are. */
static void print_metric(FILE *f, const char *metric, bool utf8)
{
	char *shown = text_escape(metric, utf8);

	fprintf(f, "  %-32s", shown ?: "?");
	free(shown);
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
			print_section(f, d, r->key, width, o->utf8);
		}
		print_metric(f, r->key->metric, o->utf8);
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
	print_shifts(f, d, o->utf8);
}

/*
 * ",delta_pct,p,significant" of side K: no p where no test ran; nothing, no
 * verdict either, where K or the first side has no values
 */
static void print_csv_change(FILE *f, const struct diff_row *r, size_t k, double alpha)
{
	if (!r->n[0] || !r->n[k]) {
		fprintf(f, ",,,");
		return;
	}
	fprintf(f, ",%.6g,", diff_delta(r, k));
	if (r->tested[k])
		fprintf(f, "%.4g", r->p[k]);
	fprintf(f, ",%d", r->tested[k] && r->p[k] < alpha);
}

/*
 * A field of text someone else chose: UTF-8 as it is (a CSV is UTF-8,
 * whatever the locale), every control character and invalid byte as \xNN,
 * so that no row is cut or a terminal moved; then quoted as RFC 4180 says.
 */
static void csv_write_escaped(FILE *f, const char *s)
{
	char *shown = text_escape(s, true);

	csv_write_field(f, shown ?: "?");
	free(shown);
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
		csv_write_escaped(f, r->key->vm);
		fprintf(f, ",%s,", vc);
		csv_write_escaped(f, r->key->metric);
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
