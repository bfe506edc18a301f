// SPDX-License-Identifier: GPL-2.0
/*
 * map_each() on a real BPF hash map (root): every entry once, values as
 * written, however many batches it takes; an early stop is returned; an
 * empty map calls nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "map_iter.h"

#define ENTRIES 1000
#define VALUE_SIZE 8192 /* as large as a thread's stats */

struct seen {
	unsigned char hits[ENTRIES];
	size_t calls, stop_after;
	int bad_value;
};

static int count(const void *key, const void *value, void *ctx)
{
	struct seen *s = ctx;
	__u32 k = *(const __u32 *)key;

	if (k >= ENTRIES)
		return -1;
	s->hits[k]++;
	if (((const __u32 *)value)[VALUE_SIZE / 4 - 1] != k * 7)
		s->bad_value++;
	return ++s->calls == s->stop_after ? 42 : 0;
}

static int make_map(size_t n)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "kvmmmu_test", 4, VALUE_SIZE, ENTRIES, NULL);
	__u32 *value = calloc(1, VALUE_SIZE);

	assert_true(fd >= 0);
	assert_non_null(value);
	for (__u32 k = 0; k < n; k++) {
		value[VALUE_SIZE / 4 - 1] = k * 7;
		assert_int_equal(bpf_map_update_elem(fd, &k, value, BPF_NOEXIST), 0);
	}
	free(value);
	return fd;
}

static void every_entry_once(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	int fd = make_map(ENTRIES);

	(void)state;
	assert_int_equal(map_each(fd, 4, VALUE_SIZE, count, s), 0);
	assert_int_equal(s->calls, ENTRIES);
	for (size_t k = 0; k < ENTRIES; k++)
		assert_int_equal(s->hits[k], 1);
	assert_int_equal(s->bad_value, 0);
	close(fd);
	free(s);
}

static void stops_when_told(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	int fd = make_map(100);

	(void)state;
	s->stop_after = 50;
	assert_int_equal(map_each(fd, 4, VALUE_SIZE, count, s), 42);
	assert_int_equal(s->calls, 50);
	close(fd);
	free(s);
}

static void empty_map(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));
	int fd = make_map(0);

	(void)state;
	assert_int_equal(map_each(fd, 4, VALUE_SIZE, count, s), 0);
	assert_int_equal(s->calls, 0);
	close(fd);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_entry_once),
		cmocka_unit_test(stops_when_told),
		cmocka_unit_test(empty_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
