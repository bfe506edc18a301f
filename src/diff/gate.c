// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"

/* "+10%", "-5%", "10%", "+2.5%": the threshold after a gate's last ':'. */
static bool parse_threshold(struct diff_gate *g, const char *t)
{
	char *end;

	g->dir = *t == '+' ? 1 : *t == '-' ? -1 : 0;
	t += g->dir != 0;
	if (*t < '0' || *t > '9')
		return false;
	g->pct = strtod(t, &end);
	/* plain decimals: no exponent, no hex */
	return end > t && (size_t)(end - t) == strspn(t, "0123456789.") && !strcmp(end, "%") &&
	       isfinite(g->pct);
}

bool diff_gate_parse(struct diff_gate *g, const char *spec, char *why, size_t len)
{
	const char *colon = strrchr(spec, ':');
	char *re;
	int rc;

	memset(g, 0, sizeof(*g));
	g->spec = spec;
	g->dir = 1; /* a rise of any size: what a regression gate means by default */
	/* no metric name holds a ':': one that ends the spec left its threshold out */
	if (colon && !colon[1]) {
		snprintf(why, len, "no threshold after ':' (+10%%, -5%% or 10%%)");
		return false;
	}
	/* a threshold follows the last ':' when it starts as one does; else all is REGEX */
	if (colon && strchr("+-0123456789", colon[1])) {
		if (!parse_threshold(g, colon + 1)) {
			snprintf(why, len, "'%s' is no threshold (+10%%, -5%% or 10%%)", colon + 1);
			return false;
		}
	} else {
		colon = spec + strlen(spec);
	}
	if (colon == spec) {
		snprintf(why, len, "no metric (REGEX[:THRESHOLD])");
		return false;
	}
	re = strndup(spec, (size_t)(colon - spec));
	if (!re) {
		snprintf(why, len, "out of memory");
		return false;
	}
	rc = regcomp(&g->re, re, REG_EXTENDED | REG_NOSUB);
	if (rc)
		snprintf(why, len, "'%s' is not a valid regular expression", re);
	free(re);
	return !rc;
}

void diff_gate_free(struct diff_gate *g)
{
	regfree(&g->re);
}

bool diff_gate_matches(const struct diff_gate *g, const char *metric)
{
	return !regexec(&g->re, metric, 0, NULL, 0);
}

bool diff_gate_trips(const struct diff_gate *g, double delta, bool tested, bool significant)
{
	bool past;

	if (tested && !significant)
		return false;
	if (g->dir > 0)
		past = delta > g->pct;
	else if (g->dir < 0)
		past = delta < -g->pct;
	else
		past = fabs(delta) > g->pct;
	return past;
}
