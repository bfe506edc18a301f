// SPDX-License-Identifier: GPL-2.0
/*
 * Before 5.19 the mmu_lock waits come from kprobes on the qrwlock slow
 * paths, whose kretprobes cannot tell locks apart: the rule that only the
 * return at the wait's own depth closes it (bpf/mmu_lock.bpf.c), on the
 * sequences a CPU can show. No kernel here is older than 5.19, and kprobe
 * programs cannot be run with BPF_PROG_TEST_RUN.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <cmocka.h>

#include "kvmmmu.h"

#define MMU_LOCK 0x1000

/* The mmu_lock object's begin() on a traced lock: the wait opens. */
static void traced_begin(struct kvmmmu_lock_wait *w)
{
	w->lock = MMU_LOCK;
	w->begin_ts++;
	kvmmmu_slowpath_enter(w, 1);
}

/* end(): the wait closes. */
static void close_wait(struct kvmmmu_lock_wait *w)
{
	w->lock = 0;
}

static void irq_inside_the_wait(void **state)
{
	struct kvmmmu_lock_wait w = {0};

	(void)state;
	traced_begin(&w);
	/* an interrupt takes another rwlock's slow path, and returns */
	kvmmmu_slowpath_enter(&w, 0);
	assert_false(kvmmmu_slowpath_leave(&w));
	assert_int_equal(w.lock, MMU_LOCK); /* still waiting */
	/* our own return closes it */
	assert_true(kvmmmu_slowpath_leave(&w));
	close_wait(&w);
	assert_int_equal(w.depth, 0);
}

static void untraced_alone_closes_nothing(void **state)
{
	struct kvmmmu_lock_wait w = {0};

	(void)state;
	kvmmmu_slowpath_enter(&w, 0);
	assert_false(kvmmmu_slowpath_leave(&w));
	assert_int_equal(w.depth, 0);
}

static void traced_inside_untraced(void **state)
{
	struct kvmmmu_lock_wait w = {0};

	(void)state;
	/* a wait that begins inside another slow path closes at its own depth */
	kvmmmu_slowpath_enter(&w, 0);
	traced_begin(&w);
	assert_int_equal(w.wait_depth, 2);
	assert_true(kvmmmu_slowpath_leave(&w));
	close_wait(&w);
	assert_false(kvmmmu_slowpath_leave(&w));
	assert_int_equal(w.depth, 0);
}

static void missed_return_heals(void **state)
{
	struct kvmmmu_lock_wait w = {0};

	(void)state;
	/* a kretprobe missed (maxactive): depth stays one too high */
	kvmmmu_slowpath_enter(&w, 0);
	/* the next traced wait still pairs with its own return */
	traced_begin(&w);
	kvmmmu_slowpath_enter(&w, 0);
	assert_false(kvmmmu_slowpath_leave(&w));
	assert_true(kvmmmu_slowpath_leave(&w));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(irq_inside_the_wait),
		cmocka_unit_test(untraced_alone_closes_nothing),
		cmocka_unit_test(traced_inside_untraced),
		cmocka_unit_test(missed_return_heals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
