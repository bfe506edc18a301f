// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline (src/core/timeline.c): each event's faults since its VM's
 * previous one; timeline_trim(): a live session's timeline keeps only what a
 * snapshot has not shown yet, plus each VM's latest event (the next one's
 * faults_between counts from it), in order; its cap and a process's exit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "timeline.h"

/* A timeline of events of the VMs TGIDS, in order; wall is the position. */
static void fill(struct timeline *x, const __u32 *tgids, size_t n)
{
	memset(x, 0, sizeof(*x));
	x->events = calloc(n ? n : 1, sizeof(*x->events));
	assert_non_null(x->events);
	x->cap = n;
	x->n = n;
	for (size_t i = 0; i < n; i++) {
		x->events[i].ev.tgid = tgids[i];
		x->events[i].wall = (double)i;
	}
}

/* The positions (original indexes) of the events left. */
static void expect(const struct timeline *x, const int *want, size_t n)
{
	assert_int_equal(x->n, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal((int)x->events[i].wall, want[i]);
}

static void shown_events_go_but_each_vms_latest(void **state)
{
	const __u32 tgids[] = {10, 20, 10, 10, 30, 20, 10};
	/* the first 5 were shown: 10's latest of those (3) goes, since 6 is newer;
	 * 30's (4) stays (its only one); 20's 1 goes (5 is newer) */
	const int want[] = {4, 5, 6};
	struct timeline x;

	(void)state;
	fill(&x, tgids, 7);
	assert_int_equal(timeline_trim(&x, 5), 4);
	expect(&x, want, 3);
	free(x.events);
}

static void latest_shown_event_of_a_quiet_vm_stays(void **state)
{
	const __u32 tgids[] = {10, 10, 20, 20};
	const int want[] = {1, 3};
	struct timeline x;

	(void)state;
	fill(&x, tgids, 4);
	/* everything shown: only each VM's latest is left, in order */
	assert_int_equal(timeline_trim(&x, 4), 2);
	expect(&x, want, 2);
	/* again: nothing more goes */
	assert_int_equal(timeline_trim(&x, 2), 0);
	expect(&x, want, 2);
	free(x.events);
}

static void nothing_shown_nothing_goes(void **state)
{
	const __u32 tgids[] = {10, 10, 10};
	const int want[] = {0, 1, 2};
	struct timeline x;

	(void)state;
	fill(&x, tgids, 3);
	assert_int_equal(timeline_trim(&x, 0), 0);
	expect(&x, want, 3);
	free(x.events);
	fill(&x, NULL, 0);
	assert_int_equal(timeline_trim(&x, 0), 0);
	assert_int_equal(x.n, 0);
	free(x.events);
}

/* A long run's timeline stays under the cap; a VM's latest event stays; SEEN follows. */
static void cap_keeps_it_bounded(void **state)
{
	size_t n = TIMELINE_MAX_EVENTS + 10, seen = 100;
	__u32 *tgids = calloc(n, sizeof(*tgids));
	struct timeline x;

	(void)state;
	assert_non_null(tgids);
	tgids[0] = 30; /* a quiet VM: its one event is its latest */
	for (size_t i = 1; i < n; i++)
		tgids[i] = 10 + 10 * (i % 2);
	fill(&x, tgids, n);
	assert_int_equal(timeline_cap(&x, &seen), n - TIMELINE_MAX_EVENTS / 4 * 3);
	assert_int_equal(x.n, TIMELINE_MAX_EVENTS / 4 * 3);
	assert_int_equal(x.capped, n - TIMELINE_MAX_EVENTS / 4 * 3);
	assert_int_equal(x.events[0].ev.tgid, 30); /* kept, and first */
	assert_int_equal((int)x.events[1].wall, (int)(n - TIMELINE_MAX_EVENTS / 4 * 3) + 1);
	assert_int_equal((int)x.events[x.n - 1].wall, (int)n - 1);
	assert_int_equal(seen, 1); /* the 99 shown events after it went */
	/* under the cap: nothing goes */
	assert_int_equal(timeline_cap(&x, &seen), 0);
	free(x.events);
	free(tgids);
}

/* Each event counts the faults since its own VM's previous one: two VMs of one process apart. */
static void faults_between_are_per_vm(void **state)
{
	struct timeline x = {0};
	struct kvmmmu_event e = {.tgid = 10};
	const struct {
		int vm_index;
		__u64 faults, want;
	} steps[] = {{1, 100, 100}, {2, 40, 40}, {1, 130, 30}, {2, 45, 5}, {1, 120, 0}};

	(void)state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		e.faults = steps[i].faults;
		assert_int_equal(timeline_append(&x, &e, steps[i].vm_index, 1.5 * (double)i), 0);
		assert_int_equal(x.events[i].faults_between, steps[i].want);
		assert_int_equal(x.events[i].vm_index, steps[i].vm_index);
	}
	assert_int_equal(x.n, 5);
	assert_true(x.events[4].wall == 6.0);
	timeline_free(&x);
	assert_null(x.events);
}

/* A process's events go with it; the caller's index moves back by the shown ones that went. */
static void forget_counts_the_shown_ones(void **state)
{
	const __u32 tgids[] = {10, 20, 10, 20, 10};
	const int want[] = {1, 3};
	struct timeline x;

	(void)state;
	fill(&x, tgids, 5);
	assert_int_equal(timeline_forget(&x, 10, 3), 2); /* 0 and 2 were shown, 4 was not */
	expect(&x, want, 2);
	free(x.events);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shown_events_go_but_each_vms_latest),
		cmocka_unit_test(latest_shown_event_of_a_quiet_vm_stays),
		cmocka_unit_test(nothing_shown_nothing_goes),
		cmocka_unit_test(cap_keeps_it_bounded),
		cmocka_unit_test(faults_between_are_per_vm),
		cmocka_unit_test(forget_counts_the_shown_ones),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
