// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-diff: which figures changed between sets of runs (tdp_mmu=N vs Y,
 * kernel A vs B vs C), by how much, and whether by more than run-to-run
 * noise, in the manner of Go's benchstat; and an exit status for CI.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cli.h"
#include "parse.h"
#include "compare.h"
#include "gate.h"
#include "log.h"
#include "plot.h"
#include "report.h"
#include "side.h"
#include "sysinfo.h"
#include "text_escape.h"

const char *log_prog = "kvmmmu-diff";
bool log_verbose;

/* a --fail-on gate tripped: apart from errors (1) and usage (2) */
#define EXIT_GATE 3
#define MAX_GATES 16
/* tripped rows named on stderr, a gate */
#define GATE_LINES 10

struct diff_env {
	const char *args[MAX_SIDES];
	int n_args;
	double alpha;
	bool holm, all, csv;
	bool utf8; /* the locale writes UTF-8 */
	const char *filter;
	regex_t re;
	const char *plot;
	struct diff_gate gates[MAX_GATES];
	int n_gates;
};

const char *argp_program_version = "kvmmmu-diff " KVMMMU_VERSION;

static const char doc[] =
	"Compare kvmmmu CSV runs: per VM (by name) and vCPU, each figure's median a side, "
	"each later side's change from the first, and a Mann-Whitney U test of whether it is "
	"more than noise.\n"
	"\n"
	"USAGE: kvmmmu-diff [OPTIONS] A.csv B.csv [C.csv...]\n"
	"       kvmmmu-diff [OPTIONS] NAME=a1.csv,a2.csv,... NAME=b1.csv,... [NAME=...]\n"
	"\v"
	"A side is named as given (NAME=FILES), else after its file (runs/n1.csv: n1), else "
	"by its place (A, B, ...). Up to 8 sides, each compared with the first.\n"
	"\n"
	"With fewer than 4 runs a side only the deltas are shown: significance needs at least 4 "
	"runs a side (the smallest p-value 4 and 4 runs can give is 0.029).\n"
	"\n"
	"--fail-on REGEX[:THRESHOLD] exits 3 when a later side moved a figure whose metric "
	"matches REGEX past THRESHOLD: +10% a rise of more than 10%, -5% a fall of more than "
	"5%, 10% either way; a rise of any size when left out. Tested rows count only when the "
	"change is significant; with fewer runs, the change of the medians alone. Exit status: "
	"0 fine, 1 bad input, 2 usage, 3 a gate tripped.\n"
	"\n"
	"EXAMPLES:\n"
	"    kvmmmu-diff before.csv after.csv\n"
	"    kvmmmu-diff N=n1.csv,n2.csv,n3.csv,n4.csv Y=y1.csv,y2.csv,y3.csv,y4.csv\n"
	"    kvmmmu-diff --holm --filter 'faults|p99' N=... Y=...\n"
	"    kvmmmu-diff --fail-on 'fault_ns p99:+10%' --fail-on '^faults$:5%' base=... new=...\n";

static const struct argp_option options[] = {
	{"alpha", 'a', "P", 0, "Significance level (default 0.05)", 0},
	{"holm", 'H', NULL, 0, "Holm-Bonferroni adjustment across the rows tested", 0},
	{"all", 'A', NULL, 0, "Show unchanged rows too (default: changed rows and key figures)", 0},
	{"filter", 'f', "REGEX", 0, "Only metrics matching REGEX", 0},
	{"format", 'F', "text|csv", 0, "Output format (default text)", 0},
	{"plot", 'P', "FILE", 0, "Also draw the distributions and shares with gnuplot (.png, .svg)",
	 0},
	{"fail-on", 'x', "REGEX[:THRESHOLD]", 0,
	 "Exit 3 when a figure matching REGEX moved past THRESHOLD (+10%, -5%, 10%; default: any "
	 "rise); repeatable",
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
	case 'a':
		/* decimal, as every number kvmmmu takes: no hex, no exponent */
		if (parse_decimal(arg, 0, 1, &env->alpha) || !(env->alpha > 0 && env->alpha < 1))
			usage_error("--alpha '%s': expected a number between 0 and 1", arg);
		break;
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
	case 'x': {
		char why[256];

		if (env->n_gates == MAX_GATES)
			usage_error("--fail-on: more than %d gates", MAX_GATES);
		if (!diff_gate_parse(&env->gates[env->n_gates], arg, why, sizeof(why)))
			usage_error("--fail-on '%s': %s", arg, why);
		env->n_gates++;
		break;
	}
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case ARGP_KEY_ARG:
		if (env->n_args == MAX_SIDES)
			usage_error("unexpected argument '%s': at most %d sides", arg, MAX_SIDES);
		for (int i = 0; i < env->n_args; i++)
			if (!strcmp(env->args[i], arg))
				usage_error("'%s' is given twice: give different sides", arg);
		env->args[env->n_args++] = arg;
		break;
	case ARGP_KEY_END:
		if (env->n_args < 2)
			usage_error("expected two sides or more (A.csv B.csv, or NAME=FILES "
				    "NAME=FILES)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * The --fail-on gates against every row, shown or not: each tripped row one
 * line on stderr (up to GATE_LINES a gate). 0, EXIT_GATE when one tripped,
 * 1 when a gate matches no figure, or none of a later side's (a gate that
 * cannot trip guards nothing: with two sides, the same "matches nothing").
 */
static int judge_gates(struct diff_env *env, const struct diff *d)
{
	int rc = 0;

	for (int g = 0; g < env->n_gates; g++) {
		struct diff_gate *gate = &env->gates[g];
		size_t compared[MAX_SIDES] = {};
		bool blind = false;

		for (size_t i = 0; i < d->n_rows; i++) {
			const struct diff_row *r = &d->rows[i];
			char where[4 * sizeof(r->key->vm) + 32], p[48] = "", *metric;
			bool other = false;

			for (size_t k = 1; k < d->n_sides; k++)
				other |= r->n[k] > 0;
			/* on one side only: nothing compared, nothing to judge */
			if (!diff_gate_matches(gate, r->key->metric) || !r->n[0] || !other)
				continue;
			gate->matched++;
			for (size_t k = 1; k < d->n_sides; k++) {
				compared[k] += r->n[k] > 0;
				if (!r->n[k] ||
				    !diff_gate_trips(gate, diff_delta(r, k), r->tested[k],
						     r->p[k] < env->alpha))
					continue;
				if (gate->tripped++ >= GATE_LINES)
					continue;
				report_place(where, sizeof(where), r->key, env->utf8);
				metric = text_escape(r->key->metric, env->utf8);
				if (r->tested[k])
					snprintf(p, sizeof(p), " (p=%.3f n=%zu+%zu)", r->p[k],
						 r->n[0], r->n[k]);
				elog("--fail-on '%s': %s %s: %s %+.1f%% from %s%s", gate->spec,
				     where, metric ?: "?", d->sides[k]->name, diff_delta(r, k),
				     d->sides[0]->name, p);
				free(metric);
			}
		}
		if (!gate->matched) {
			elog("--fail-on '%s': no figure compared matches it", gate->spec);
			return 1;
		}
		for (size_t k = 1; k < d->n_sides; k++) {
			if (compared[k])
				continue;
			elog("--fail-on '%s': %s has no figure it matches (nothing to compare with "
			     "%s)",
			     gate->spec, d->sides[k]->name, d->sides[0]->name);
			blind = true;
		}
		if (blind)
			return 1;
		if (gate->tripped > GATE_LINES)
			elog("--fail-on '%s': and %zu more", gate->spec,
			     gate->tripped - GATE_LINES);
		if (gate->tripped)
			rc = EXIT_GATE;
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {options, parse_opt, NULL, doc, NULL, NULL, NULL};
	struct diff_env env = {.alpha = 0.05};
	struct side *sides[MAX_SIDES] = {};
	struct report_opts opts;
	struct diff d = {};
	int err = 0, n = 0;

	/* VM names in UTF-8 shown as such where the terminal's locale says it writes UTF-8 */
	setlocale(LC_CTYPE, "");
	env.utf8 = text_locale_utf8();
	cli_parse(&argp, argc, argv, 0, &env);
	for (; n < env.n_args; n++) {
		sides[n] = calloc(1, sizeof(*sides[n]));
		if (!sides[n]) {
			elog("out of memory");
			err = 1;
			goto out;
		}
		err = side_load(sides[n], env.args[n]);
		if (err) {
			err = err == SIDE_USAGE ? 2 : 1;
			n++;
			goto out;
		}
	}
	if (sides_settle_names(sides, (size_t)n)) {
		err = 2;
		goto out;
	}
	err = sides_check_files(sides, (size_t)n);
	if (err) {
		err = err == SIDE_USAGE ? 2 : 1;
		goto out;
	}
	if (diff_build(&d, sides, (size_t)n, env.filter ? &env.re : NULL, env.holm)) {
		elog("out of memory");
		err = 1;
		goto out;
	}
	if (!d.compared && env.filter && !d.matched) {
		elog("no figure matches --filter '%s'", env.filter);
		err = 1;
		goto out;
	}
	if (!d.compared) {
		elog("%s and %s have no figure in common (VM names, vCPUs and metrics differ)",
		     sides[0]->name, sides[1]->name);
		err = 1;
		goto out;
	}
	opts = (struct report_opts){
		.alpha = env.alpha, .holm = env.holm, .all = env.all, .utf8 = env.utf8};
	if (env.csv)
		report_csv(stdout, &d, &opts);
	else
		report_text(stdout, &d, &opts);
	if (fflush(stdout)) {
		elog("writing the report: %s", strerror(errno));
		err = 1;
		goto out;
	}
	if (env.plot && diff_plot(env.plot, sides, (size_t)n))
		err = 1;
	if (!err)
		err = judge_gates(&env, &d);
out:
	diff_free(&d);
	for (int i = 0; i < n; i++) {
		if (sides[i])
			side_free(sides[i]);
		free(sides[i]);
	}
	for (int g = 0; g < env.n_gates; g++)
		diff_gate_free(&env.gates[g]);
	if (env.filter)
		regfree(&env.re);
	return err;
}
