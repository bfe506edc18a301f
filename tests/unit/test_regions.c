// SPDX-License-Identifier: GPL-2.0
/*
 * Hot regions (src/core/regions.c): a VM's most faulted regions, most first,
 * at most as many as asked for, other VMs' (another process, or another VM
 * of the same process) left out; its total. The counts a source reads in
 * pieces (an epoch's, taken out of the map as it ends) merged into one per
 * VM, epoch, memslot and region, and filtered.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "regions.h"

static void add(struct regions *r, int pid, int vm_index, __u64 base, __u64 faults)
{
	struct region_count c = {
		.pid = pid, .vm_index = vm_index, .slot = 1, .base = base, .faults = faults};

	assert_int_equal(regions_add(r, &c), 0);
}

static void top_of_one_vm(void **state)
{
	static const __u64 faults[] = {5, 90, 7, 90, 1, 300, 42};
	const struct region_count *top[3];
	struct regions r = {.size = 1 << 30};

	(void)state;
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		add(&r, 100, 1, (__u64)i << 30, faults[i]);
	add(&r, 100, 2, 0, 1000); /* the process's second VM */
	add(&r, 200, 1, 0, 2000); /* another process */
	assert_int_equal(regions_top(&r, 100, 1, top, 3), 3);
	assert_int_equal(top[0]->faults, 300);
	assert_int_equal(top[1]->faults, 90);
	assert_int_equal(top[2]->faults, 90);
	assert_true(top[1]->base != top[2]->base);
	assert_int_equal(regions_vm_total(&r, 100, 1), 5 + 90 + 7 + 90 + 1 + 300 + 42);
	assert_int_equal(regions_top(&r, 100, 2, top, 3), 1);
	assert_int_equal(top[0]->faults, 1000);
	assert_int_equal(regions_top(&r, 300, 1, top, 3), 0);
	assert_int_equal(regions_vm_total(&r, 300, 1), 0);
	regions_free(&r);
}

static void fewer_than_asked(void **state)
{
	const struct region_count *top[10];
	struct regions r = {.size = 1 << 24}, copy;

	(void)state;
	add(&r, 7, 1, 0, 3);
	add(&r, 7, 1, 1 << 24, 9);
	assert_int_equal(regions_top(&r, 7, 1, top, 10), 2);
	assert_int_equal(top[0]->faults, 9);
	assert_int_equal(top[1]->faults, 3);
	assert_int_equal(regions_copy(&copy, &r), 0);
	assert_int_equal(copy.n, 2);
	assert_true(copy.size == r.size);
	regions_free(&copy);
	regions_free(&r);
	assert_null(r.items);
}

static void add_full(struct regions *r, int pid, int vm_index, __u32 epoch, __s32 slot, __u64 base,
		     __u64 faults)
{
	struct region_count c = {.pid = pid,
				 .vm_index = vm_index,
				 .slot = slot,
				 .epoch = epoch,
				 .base = base,
				 .faults = faults};

	assert_int_equal(regions_add(r, &c), 0);
}

static void merge_adds_equal_ones(void **state)
{
	struct regions r = {.size = 1 << 22}, more = {0};

	(void)state;
	add_full(&r, 9, 1, 2, 1, 4 << 22, 10);
	add_full(&r, 9, 1, 1, 1, 4 << 22, 5);  /* another epoch: apart */
	add_full(&r, 9, 1, 2, -1, 4 << 22, 7); /* the fast path: apart */
	add_full(&r, 9, 2, 2, 1, 4 << 22, 3);  /* the process's second VM: apart */
	add_full(&more, 9, 1, 2, 1, 4 << 22, 20);
	add_full(&more, 9, 1, 1, 1, 4 << 22, 1);
	add_full(&more, 9, 1, 2, 1, 5 << 22, 2);
	assert_int_equal(regions_add_all(&r, &more), 0);
	assert_int_equal(r.n, 7);
	regions_merge(&r);
	assert_int_equal(r.n, 5);
	/* in order: VM, epoch, slot (unsigned: -1 last), base */
	assert_int_equal(r.items[0].epoch, 1);
	assert_int_equal(r.items[0].faults, 6);
	assert_int_equal(r.items[1].epoch, 2);
	assert_int_equal(r.items[1].slot, 1);
	assert_true(r.items[1].base == 4 << 22);
	assert_int_equal(r.items[1].faults, 30);
	assert_true(r.items[2].base == 5 << 22);
	assert_int_equal(r.items[2].faults, 2);
	assert_int_equal(r.items[3].slot, -1);
	assert_int_equal(r.items[3].faults, 7);
	assert_int_equal(r.items[4].vm_index, 2);
	assert_int_equal(regions_vm_total(&r, 9, 1), 6 + 30 + 2 + 7);
	regions_merge(&r); /* merged stays merged */
	assert_int_equal(r.n, 5);
	regions_free(&more);
	regions_free(&r);
}

static bool epoch_after_one(const struct region_count *c, void *ctx)
{
	(void)ctx;
	return c->epoch > 1;
}

static void filter_keeps_what_it_is_told(void **state)
{
	struct regions r = {.size = 1 << 30}, none = {0};

	(void)state;
	for (__u32 e = 0; e < 4; e++)
		add_full(&r, 3, 1, e, 0, 0, e + 1);
	assert_int_equal(regions_filter(&r, epoch_after_one, NULL), 2);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.items[0].epoch, 2);
	assert_int_equal(r.items[1].epoch, 3);
	assert_int_equal(regions_filter(&none, epoch_after_one, NULL), 0);
	assert_int_equal(regions_add_all(&r, &none), 0);
	assert_int_equal(r.n, 2);
	regions_merge(&none);
	regions_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(top_of_one_vm),
		cmocka_unit_test(fewer_than_asked),
		cmocka_unit_test(merge_adds_equal_ones),
		cmocka_unit_test(filter_keeps_what_it_is_told),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
