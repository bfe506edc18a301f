// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-diff: which figures changed between two sets of runs (tdp_mmu=N
 * vs Y, kernel A vs B), by how much, and whether by more than run-to-run
 * noise, in the manner of Go's benchstat.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cli.h"
#include "derive.h"
#include "plot.h"
#include "vm_name.h"
#include "log.h"
#include "parse.h"
#include "stats.h"
#include "sysinfo.h"

const char *log_prog = "kvmmmu-diff";
bool log_verbose;

struct diff_env {
	const char *args[2];
	int n_args;
	double alpha;
	bool holm, all, csv;
	const char *filter;
	regex_t re;
	const char *plot;
};

const char *argp_program_version = "kvmmmu-diff " KVMMMU_VERSION;

static const char doc[] =
	"Compare kvmmmu CSV runs: per VM (by name) and vCPU, each figure's median a side, "
	"the change, and a Mann-Whitney U test of whether it is more than noise.\n"
	"\n"
	"USAGE: kvmmmu-diff [OPTIONS] A.csv B.csv\n"
	"       kvmmmu-diff [OPTIONS] NAME=a1.csv,a2.csv,... NAME=b1.csv,...\n"
	"\v"
	"With one run a side only the deltas are shown: significance needs at least 4 runs a "
	"side (the smallest p-value 4 and 4 runs can give is 0.029).\n"
	"\n"
	"EXAMPLES:\n"
	"    kvmmmu-diff before.csv after.csv\n"
	"    kvmmmu-diff N=n1.csv,n2.csv,n3.csv,n4.csv Y=y1.csv,y2.csv,y3.csv,y4.csv\n"
	"    kvmmmu-diff --holm --filter 'faults|p99' N=... Y=...\n";

static const struct argp_option options[] = {
	{"alpha", 'a', "P", 0, "Significance level (default 0.05)", 0},
	{"holm", 'H', NULL, 0, "Holm-Bonferroni adjustment across the rows tested", 0},
	{"all", 'A', NULL, 0, "Show unchanged rows too (default: changed rows and key figures)", 0},
	{"filter", 'f', "REGEX", 0, "Only metrics matching REGEX", 0},
	{"format", 'F', "text|csv", 0, "Output format (default text)", 0},
	{"plot", 'P', "FILE", 0, "Also draw the distributions and shares with gnuplot (.png, .svg)",
	 0},
	{NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0},
	{},
};

#define usage_error cli_usage_error

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct diff_env *env = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		cli_key_init(state);
		break;
	case 'a': {
		char *end;

		env->alpha = strtod(arg, &end);
		if (*end || !(env->alpha > 0 && env->alpha < 1))
			usage_error("--alpha '%s': expected a number between 0 and 1", arg);
		break;
	}
	case 'H':
		env->holm = true;
		break;
	case 'A':
		env->all = true;
		break;
	case 'f':
		env->filter = arg;
		if (regcomp(&env->re, arg, REG_EXTENDED | REG_NOSUB))
			usage_error("--filter '%s': not a valid regular expression", arg);
		break;
	case 'F':
		if (strcmp(arg, "text") && strcmp(arg, "csv"))
			usage_error("--format '%s': expected text or csv", arg);
		env->csv = !strcmp(arg, "csv");
		break;
	case 'P': {
		char why[PATH_MAX + 64];

		if (!diff_plot_path_ok(arg, why, sizeof(why)))
			usage_error("--plot '%s': %s", arg, why);
		env->plot = arg;
		break;
	}
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case ARGP_KEY_ARG:
		if (env->n_args == 2)
			usage_error("unexpected argument '%s': give two sides", arg);
		env->args[env->n_args++] = arg;
		break;
	case ARGP_KEY_END:
		if (env->n_args != 2)
			usage_error("expected two sides (A.csv B.csv, or NAME=FILES NAME=FILES)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* "NAME=f1,f2" or a plain file (named A or B by its place). */
static int load_side(struct side *s, const char *arg, const char *default_name)
{
	const char *eq = strchr(arg, '=');
	char *list, *save = NULL, err[512];

	/* NAME=FILES: a name without '/' before the '=' (a path may hold '=' further on) */
	if (eq && eq > arg && !memchr(arg, '/', (size_t)(eq - arg))) {
		snprintf(s->name, sizeof(s->name), "%.*s", (int)(eq - arg), arg);
		list = strdup(eq + 1);
	} else if (eq == arg) {
		elog("'%s': a side's name is empty (NAME=FILES)", arg);
		return -EINVAL;
	} else {
		snprintf(s->name, sizeof(s->name), "%s", default_name);
		list = strdup(arg);
	}
	if (!list)
		return -ENOMEM;
	for (char *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		if (s->n == MAX_RUNS) {
			elog("side %s: more than %d runs", s->name, MAX_RUNS);
			free(list);
			return -E2BIG;
		}
		if (run_load(&s->runs[s->n], f, err, sizeof(err))) {
			elog("%s", err);
			free(list);
			return -EINVAL;
		}
		s->n++;
	}
	free(list);
	if (!s->n) {
		elog("side %s has no files", s->name);
		return -EINVAL;
	}
	return 0;
}

static const char *meta(const struct run *r, const char *key)
{
	const char *v = csv_table_meta(&r->table, key);

	return v ? v : "?";
}

/*
 * The workload a run measured, as comparable text: what followed "--" in a
 * tracer's command line, or kvmmmu-load's own, without the options that
 * name its output (--csv FILE, --label TEXT), which differ from run to run.
 */
static void workload(const struct run *r, char *buf, size_t len)
{
	const char *c = csv_table_meta(&r->table, "command"), *w, *end, *base;
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

/* Warns when the runs of A and B (or of one side) measured different workloads. */
static void warn_workloads(FILE *f, const struct side *a, const struct side *b)
{
	const struct side *sides[] = {a, b};
	char first[2][512], w[512];

	for (int i = 0; i < 2; i++) {
		workload(&sides[i]->runs[0], first[i], sizeof(first[i]));
		for (size_t k = 1; k < sides[i]->n; k++) {
			workload(&sides[i]->runs[k], w, sizeof(w));
			if (strcmp(w, first[i])) {
				fprintf(f,
					"warning: the runs of %s measured different workloads "
					"('%s', '%s')\n",
					sides[i]->name, first[i], w);
				break;
			}
		}
	}
	if (strcmp(first[0], first[1]))
		fprintf(f, "warning: the sides measured different workloads (%s '%s', %s '%s')\n",
			a->name, first[0][0] ? first[0] : "?", b->name,
			first[1][0] ? first[1] : "?");
}

/* Runs a side a row needs to be tested: 4 and 4 give p >= 0.029, 3 and 3 never below 0.1. */
#define MIN_TESTED_RUNS 4

/* A side's spread in %: infinite from one run (nothing to measure it by). */
static double spread(const double *x, size_t n)
{
	return n < 2 ? INFINITY : stats_spread_pct(x, n);
}

/* The same for the text report: "± 3%", or "±  ∞" from one run, as benchstat shows it. */
static const char *spread_text(char *buf, size_t len, const double *x, size_t n)
{
	if (n < 2)
		snprintf(buf, len, "±   ∞");
	else
		snprintf(buf, len, "±%3.0f%%", stats_spread_pct(x, n));
	return buf;
}

/* A side's metadata, and warnings where the sides differ in ways nobody intends. */
static void print_header(FILE *f, const struct side *a, const struct side *b, size_t n_rows,
			 size_t tested, const struct diff_env *env)
{
	const struct side *sides[] = {a, b};

	for (int i = 0; i < 2; i++) {
		const struct run *r = &sides[i]->runs[0];

		fprintf(f, "%s: %zu run%s; kernel %s, tdp_mmu=%s, host %s, tool %s, label '%s'\n",
			sides[i]->name, sides[i]->n, sides[i]->n == 1 ? "" : "s", meta(r, "kernel"),
			meta(r, "tdp_mmu"), meta(r, "hostname"), meta(r, "tool"), meta(r, "label"));
	}
	if (strcmp(meta(&a->runs[0], "hostname"), meta(&b->runs[0], "hostname")))
		fprintf(f, "warning: the sides ran on different hosts\n");
	if (strcmp(meta(&a->runs[0], "tool"), meta(&b->runs[0], "tool")))
		fprintf(f, "warning: the sides come from different commands (%s, %s)\n",
			meta(&a->runs[0], "tool"), meta(&b->runs[0], "tool"));
	warn_workloads(f, a, b);
	if (a->n < MIN_TESTED_RUNS || b->n < MIN_TESTED_RUNS)
		fprintf(f,
			"%zu rows; with %zu and %zu runs only deltas are shown: significance needs "
			"at least 4 runs a side\n",
			n_rows, a->n, b->n);
	else
		fprintf(f,
			"%zu rows tested (Mann-Whitney U, alpha %.3g%s); the smallest p-value %zu "
			"and %zu runs can give: %.3g\n",
			tested, env->alpha, env->holm ? ", Holm-Bonferroni across them" : "", a->n,
			b->n, stats_min_p(a->n, b->n));
	if (env->holm && tested) {
		size_t need = 2;

		/* Holm's strictest step: the best p-value times the rows tested */
		while (need < 64 && stats_min_p(need, need) * (double)tested >= env->alpha)
			need++;
		fprintf(f,
			"with Holm over %zu rows, a change shows only with %zu runs a side or "
			"more\n",
			tested, need);
	}
}

struct row {
	const struct scalar *key; /* from A's first run that has it */
	double a[MAX_RUNS], b[MAX_RUNS];
	size_t na, nb;
	double ma, mb, p;
	bool tested, same_bucket;
};

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

static double quantile_of(const char *metric)
{
	static const struct {
		const char *suffix;
		double q;
	} qs[] = {{" p50", 0.5}, {" p90", 0.9}, {" p99", 0.99}, {" p99.9", 0.999}};
	size_t n = strlen(metric);

	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		size_t k = strlen(qs[i].suffix);

		if (n > k && !strcmp(metric + n - k, qs[i].suffix))
			return qs[i].q;
	}
	return -1;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {options, parse_opt, NULL, doc, NULL, NULL, NULL};
	static struct side a, b;
	struct diff_env env = {.alpha = 0.05};
	struct row *rows = NULL;
	size_t n_rows = 0, cap = 0, tested = 0;
	bool matched = false; /* --filter matched some figure of A's */
	double logsum = 0;
	size_t geo_n = 0;
	int err = 0;

	cli_parse(&argp, argc, argv, 0, &env);
	if (!strcmp(env.args[0], env.args[1]))
		usage_error("both sides are '%s': give two different sides", env.args[0]);
	if (load_side(&a, env.args[0], "A") || load_side(&b, env.args[1], "B")) {
		err = 1;
		goto out;
	}
	if (!strcmp(a.name, b.name)) {
		elog("both sides are named %s", a.name);
		err = 2;
		goto out;
	}
	/* rows: every (VM, vCPU, metric) of A's runs that B's runs have too */
	for (size_t i = 0; i < a.n; i++) {
		for (size_t k = 0; k < a.runs[i].n; k++) {
			const struct scalar *s = &a.runs[i].s[k];
			bool have = false;
			struct row *r;

			if (env.filter && regexec(&env.re, s->metric, 0, NULL, 0))
				continue;
			matched = true;
			/* a row already: an earlier run of A has the figure, or this one had (O(1)
			 * a run) */
			have = run_find(&a.runs[i], s->vm, s->vcpu, s->metric) != s;
			for (size_t x = 0; x < i && !have; x++)
				have = run_find(&a.runs[x], s->vm, s->vcpu, s->metric) != NULL;
			if (have)
				continue;
			r = array_grow(rows, n_rows + 1, &cap, sizeof(*rows));
			if (!r) {
				elog("out of memory");
				err = 1;
				goto out;
			}
			rows = r;
			memset(&rows[n_rows], 0, sizeof(*rows));
			rows[n_rows].key = s;
			for (size_t x = 0; x < a.n; x++) {
				const struct scalar *v =
					run_find(&a.runs[x], s->vm, s->vcpu, s->metric);

				if (v)
					rows[n_rows].a[rows[n_rows].na++] = v->value;
			}
			for (size_t x = 0; x < b.n; x++) {
				const struct scalar *v =
					run_find(&b.runs[x], s->vm, s->vcpu, s->metric);

				if (v)
					rows[n_rows].b[rows[n_rows].nb++] = v->value;
			}
			if (rows[n_rows].nb)
				n_rows++;
		}
	}
	if (!n_rows && env.filter && !matched) {
		elog("no figure matches --filter '%s'", env.filter);
		err = 1;
		goto out;
	}
	if (!n_rows) {
		elog("%s and %s have no figure in common (VM names, vCPUs and metrics differ)",
		     a.name, b.name);
		err = 1;
		goto out;
	}
	for (size_t i = 0; i < n_rows; i++) {
		struct row *r = &rows[i];
		double q = quantile_of(r->key->metric);

		r->ma = stats_median(r->a, r->na);
		r->mb = stats_median(r->b, r->nb);
		/* as the header says: fewer runs cannot reach alpha 0.05 (3 and 3: p >= 0.1) */
		r->tested = r->na >= MIN_TESTED_RUNS && r->nb >= MIN_TESTED_RUNS;
		r->p = r->tested ? stats_mann_whitney_p(r->a, r->na, r->b, r->nb) : 1;
		tested += r->tested;
		if (q >= 0 && r->key->hist) {
			struct kvmmmu_hist ha, hb;

			side_pool(&a, r->key, &ha);
			side_pool(&b, r->key, &hb);
			r->same_bucket = stats_hist_quantile_bucket(&ha, q) ==
					 stats_hist_quantile_bucket(&hb, q);
		}
	}
	if (env.holm) {
		double *p = malloc((tested ? tested : 1) * sizeof(*p));
		size_t k = 0;

		for (size_t i = 0; p && i < n_rows; i++)
			if (rows[i].tested)
				p[k++] = rows[i].p;
		stats_holm(p, k);
		k = 0;
		for (size_t i = 0; p && i < n_rows; i++)
			if (rows[i].tested)
				rows[i].p = p[k++];
		free(p);
	}
	if (env.csv) {
		printf("vm,vcpu,metric,%s_median,%s_spread_pct,%s_n,%s_median,%s_spread_pct,%s_n,"
		       "delta_pct,p,significant\n",
		       a.name, a.name, a.name, b.name, b.name, b.name);
	} else {
		print_header(stdout, &a, &b, n_rows, tested, &env);
	}
	{
		const char *vm = NULL;
		int vcpu = -2;

		for (size_t i = 0; i < n_rows; i++) {
			const struct row *r = &rows[i];
			double delta = r->ma ? 100 * (r->mb - r->ma) / fabs(r->ma)
					     : (r->mb ? INFINITY : 0);
			bool significant = r->tested && r->p < env.alpha;
			char x[32], y[32], sa[16], sb[16];

			/*
			 * The geomean is of one unit, time: every latency figure
			 * (not counts, not shares), whether its row is shown or not.
			 */
			if (r->key->hist && r->ma > 0 && r->mb > 0) {
				logsum += log(r->mb / r->ma);
				geo_n++;
			}
			if (!env.all && !r->key->key && (r->tested ? !significant : r->ma == r->mb))
				continue;
			if (env.csv) {
				char vc[16] = "";

				if (r->key->vcpu >= 0)
					snprintf(vc, sizeof(vc), "%d", r->key->vcpu);
				csv_write_field(stdout, r->key->vm);
				printf(",%s,", vc);
				csv_write_field(stdout, r->key->metric);
				/* no spread from one run (inf), no p-value where no test ran
				 * (empty) */
				printf(",%.17g,%.3g,%zu,%.17g,%.3g,%zu,%.6g,", r->ma,
				       spread(r->a, r->na), r->na, r->mb, spread(r->b, r->nb),
				       r->nb, delta);
				if (r->tested)
					printf("%.4g", r->p);
				printf(",%d\n", significant);
				continue;
			}
			if (!vm || strcmp(vm, r->key->vm) || vcpu != r->key->vcpu) {
				/* a name is the VMM's to choose: no escape sequence reaches the
				 * terminal */
				char *shown = vm_name_escape(r->key->vm);

				vm = r->key->vm;
				vcpu = r->key->vcpu;
				if (vcpu < 0)
					printf("\nVM %s\n  %-32s %15s %15s  %8s\n", shown ?: "?",
					       "", a.name, b.name, "delta");
				else
					printf("\nVM %s vCPU %d\n", shown ?: "?", vcpu);
				free(shown);
			}
			printf("  %-32s %9s %s %9s %s  ", r->key->metric,
			       human(x, sizeof(x), r->ma), spread_text(sa, sizeof(sa), r->a, r->na),
			       human(y, sizeof(y), r->mb),
			       spread_text(sb, sizeof(sb), r->b, r->nb));
			if (!r->tested)
				printf("%+8.1f%%", delta);
			else if (significant)
				printf("%+8.1f%%  (p=%.3f n=%zu+%zu)", delta, r->p, r->na, r->nb);
			else
				printf("%8s  (p=%.3f n=%zu+%zu)", "~", r->p, r->na, r->nb);
			if (r->same_bucket)
				printf("  within one bucket");
			putchar('\n');
		}
	}
	if (!env.csv) {
		if (geo_n)
			printf("\n  %-32s %35s %+8.1f%%  (%zu latency figures)\n", "geomean", "",
			       100 * (exp(logsum / (double)geo_n) - 1), geo_n);
		else
			printf("\n  %-32s %35s %9s  (no latency figure on both sides)\n", "geomean",
			       "", "n/a");
		/* each latency figure's whole distribution: how far B moved from A */
		for (size_t i = 0; i < n_rows; i++) {
			const struct row *r = &rows[i];
			struct kvmmmu_hist ha, hb;
			size_t len = strlen(r->key->metric);

			if (!r->key->hist || len < 5 || strcmp(r->key->metric + len - 5, " mean"))
				continue;
			side_pool(&a, r->key, &ha);
			side_pool(&b, r->key, &hb);
			char who[96], *shown = vm_name_escape(r->key->vm);

			if (r->key->vcpu >= 0)
				snprintf(who, sizeof(who), "%s vCPU %d", shown ?: "?",
					 r->key->vcpu);
			else
				snprintf(who, sizeof(who), "%s", shown ?: "?");
			free(shown);
			printf("  %s %.*s: %s shifted by %.2f doublings from %s (Wasserstein-1 on "
			       "log2 ns)\n",
			       who, (int)(len - 5), r->key->metric, b.name,
			       stats_wasserstein_log2(&ha, &hb), a.name);
		}
	}
	if (env.plot && diff_plot(env.plot, &a, &b))
		err = 1;
out:
	for (size_t i = 0; i < a.n; i++)
		run_free(&a.runs[i]);
	for (size_t i = 0; i < b.n; i++)
		run_free(&b.runs[i]);
	free(rows);
	if (env.filter)
		regfree(&env.re);
	return err;
}
