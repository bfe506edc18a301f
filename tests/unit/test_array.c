// SPDX-License-Identifier: GPL-2.0
/* array_sort_large(): the order qsort() gives, each element moved whole, on every permutation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"

/* Large, as a model's rows are: a key and a body that must move with it. */
struct elem {
	int key;
	int id;
	unsigned char body[4000];
};

static int cmp_elem(const void *a, const void *b)
{
	const struct elem *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

static struct elem *make(size_t n, unsigned int seed, int keys)
{
	struct elem *e = calloc(n ? n : 1, sizeof(*e));

	assert_non_null(e);
	srand(seed);
	for (size_t i = 0; i < n; i++) {
		e[i].key = rand() % keys;
		e[i].id = (int)i;
		memset(e[i].body, (int)(i * 7 + 1), sizeof(e[i].body));
	}
	return e;
}

/* Sorted by key, every element there once, each with its own body. */
static void check(const struct elem *e, size_t n)
{
	unsigned char *seen = calloc(n ? n : 1, 1);

	assert_non_null(seen);
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(e[i - 1].key <= e[i].key);
		assert_true(e[i].id >= 0 && (size_t)e[i].id < n);
		assert_false(seen[e[i].id]);
		seen[e[i].id] = 1;
		assert_int_equal(e[i].body[0], (unsigned char)(e[i].id * 7 + 1));
		assert_int_equal(e[i].body[sizeof(e[i].body) - 1],
				 (unsigned char)(e[i].id * 7 + 1));
	}
	free(seen);
}

static void sorts_random(void **state)
{
	(void)state;
	for (size_t n = 0; n <= 40; n++) {
		for (unsigned int seed = 1; seed <= 20; seed++) {
			/* few keys: many ties; many: a permutation with long cycles */
			struct elem *e = make(n, seed, seed % 2 ? 3 : 1000);

			assert_int_equal(array_sort_large(e, n, sizeof(*e), cmp_elem), 0);
			check(e, n);
			free(e);
		}
	}
}

/* Already in order: nothing moves, ties keep their order. */
static void leaves_sorted(void **state)
{
	struct elem *e = make(9, 1, 1);

	(void)state;
	for (int i = 0; i < 9; i++)
		e[i].key = i / 3;
	assert_int_equal(array_sort_large(e, 9, sizeof(*e), cmp_elem), 0);
	for (int i = 0; i < 9; i++)
		assert_int_equal(e[i].id, i);
	/* reversed: every element changes place */
	for (int i = 0; i < 9; i++)
		e[i].key = 9 - i;
	assert_int_equal(array_sort_large(e, 9, sizeof(*e), cmp_elem), 0);
	for (int i = 0; i < 9; i++)
		assert_int_equal(e[i].id, 8 - i);
	check(e, 9);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sorts_random),
		cmocka_unit_test(leaves_sorted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
