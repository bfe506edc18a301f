// SPDX-License-Identifier: GPL-2.0
/*
 * Hot regions (src/core/regions.c): a VM's most faulted regions, most first,
 * at most as many as asked for, other VMs' (another process, or another VM
 * of the same process) left out; its total.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(top_of_one_vm),
		cmocka_unit_test(fewer_than_asked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
