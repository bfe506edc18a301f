/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DIFF_GATE_H
#define KVMMMU_DIFF_GATE_H

/*
 * --fail-on REGEX[:THRESHOLD]: kvmmmu-diff's exit status for CI. A figure
 * whose metric matches REGEX trips it when a later side moved it past
 * THRESHOLD from the first side: "+10%" a rise of more than 10%, "-5%" a
 * fall of more than 5%, "10%" either; "+0%" (a rise) when left out. Where
 * the rows were tested (4 runs a side or more) only a significant change
 * counts; with fewer runs the change of the medians alone does, as the
 * report shows it.
 */
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

struct diff_gate {
	const char *spec; /* as given */
	regex_t re;
	double pct; /* >= 0 */
	int dir;    /* +1: a rise, -1: a fall, 0: either */
	size_t matched, tripped;
};

/* Parses SPEC into G; false with why not in WHY. */
bool diff_gate_parse(struct diff_gate *g, const char *spec, char *why, size_t len);
void diff_gate_free(struct diff_gate *g);
bool diff_gate_matches(const struct diff_gate *g, const char *metric);
/* Whether a change of DELTA % (TESTED: by a U test, SIGNIFICANT or not) trips G. */
bool diff_gate_trips(const struct diff_gate *g, double delta, bool tested, bool significant);

#endif
