// SPDX-License-Identifier: GPL-2.0
/*
 * mmu_extras_trim(): a live session's timeline keeps only what a snapshot has
 * not shown yet, plus each VM's latest event (the next one's faults_between
 * counts from it), in order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mmu_extras.h"

/* A timeline of events of the VMs TGIDS, in order; wall is the position. */
static void fill(struct mmu_extras *x, const __u32 *tgids, size_t n)
{
	memset(x, 0, sizeof(*x));
	x->timeline = calloc(n ? n : 1, sizeof(*x->timeline));
	assert_non_null(x->timeline);
	x->cap_timeline = n;
	x->n_timeline = n;
	for (size_t i = 0; i < n; i++) {
		x->timeline[i].ev.tgid = tgids[i];
		x->timeline[i].wall = (double)i;
	}
}

/* The positions (original indexes) of the events left. */
static void expect(const struct mmu_extras *x, const int *want, size_t n)
{
	assert_int_equal(x->n_timeline, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal((int)x->timeline[i].wall, want[i]);
}

static void shown_events_go_but_each_vms_latest(void **state)
{
	const __u32 tgids[] = {10, 20, 10, 10, 30, 20, 10};
	/* the first 5 were shown: 10's latest of those (3) goes, since 6 is newer;
	 * 30's (4) stays (its only one); 20's 1 goes (5 is newer) */
	const int want[] = {4, 5, 6};
	struct mmu_extras x;

	(void)state;
	fill(&x, tgids, 7);
	assert_int_equal(mmu_extras_trim(&x, 5), 4);
	expect(&x, want, 3);
	free(x.timeline);
}

static void latest_shown_event_of_a_quiet_vm_stays(void **state)
{
	const __u32 tgids[] = {10, 10, 20, 20};
	const int want[] = {1, 3};
	struct mmu_extras x;

	(void)state;
	fill(&x, tgids, 4);
	/* everything shown: only each VM's latest is left, in order */
	assert_int_equal(mmu_extras_trim(&x, 4), 2);
	expect(&x, want, 2);
	/* again: nothing more goes */
	assert_int_equal(mmu_extras_trim(&x, 2), 0);
	expect(&x, want, 2);
	free(x.timeline);
}

static void nothing_shown_nothing_goes(void **state)
{
	const __u32 tgids[] = {10, 10, 10};
	const int want[] = {0, 1, 2};
	struct mmu_extras x;

	(void)state;
	fill(&x, tgids, 3);
	assert_int_equal(mmu_extras_trim(&x, 0), 0);
	expect(&x, want, 3);
	free(x.timeline);
	fill(&x, NULL, 0);
	assert_int_equal(mmu_extras_trim(&x, 0), 0);
	assert_int_equal(x.n_timeline, 0);
	free(x.timeline);
}

/* A long run's timeline stays under the cap; a VM's latest event stays; SEEN follows. */
static void cap_keeps_it_bounded(void **state)
{
	size_t n = EXTRAS_MAX_TIMELINE + 10, seen = 100;
	__u32 *tgids = calloc(n, sizeof(*tgids));
	struct mmu_extras x;

	(void)state;
	assert_non_null(tgids);
	tgids[0] = 30; /* a quiet VM: its one event is its latest */
	for (size_t i = 1; i < n; i++)
		tgids[i] = 10 + 10 * (i % 2);
	fill(&x, tgids, n);
	assert_int_equal(mmu_extras_cap(&x, &seen), n - EXTRAS_MAX_TIMELINE / 4 * 3);
	assert_int_equal(x.n_timeline, EXTRAS_MAX_TIMELINE / 4 * 3);
	assert_int_equal(x.timeline_capped, n - EXTRAS_MAX_TIMELINE / 4 * 3);
	assert_int_equal(x.timeline[0].ev.tgid, 30); /* kept, and first */
	assert_int_equal((int)x.timeline[1].wall, (int)(n - EXTRAS_MAX_TIMELINE / 4 * 3) + 1);
	assert_int_equal((int)x.timeline[x.n_timeline - 1].wall, (int)n - 1);
	assert_int_equal(seen, 1); /* the 99 shown events after it went */
	/* under the cap: nothing goes */
	assert_int_equal(mmu_extras_cap(&x, &seen), 0);
	free(x.timeline);
	free(tgids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shown_events_go_but_each_vms_latest),
		cmocka_unit_test(latest_shown_event_of_a_quiet_vm_stays),
		cmocka_unit_test(nothing_shown_nothing_goes),
		cmocka_unit_test(cap_keeps_it_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
