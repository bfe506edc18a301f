// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

void *array_grow(void *array, size_t need, size_t *cap, size_t size)
{
	size_t want = *cap ? *cap : 8;
	void *p;

	if (need <= *cap && array)
		return array;
	while (want < need)
		want *= 2;
	if (want > SIZE_MAX / size)
		return NULL;
	p = realloc(array, want * size);
	if (p)
		*cap = want;
	return p;
}

struct by_index {
	const char *base;
	size_t size;
	int (*cmp)(const void *, const void *);
};

static int cmp_index(const void *a, const void *b, void *arg)
{
	const struct by_index *x = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = x->cmp(x->base + i * x->size, x->base + j * x->size);

	/* equal elements keep their order, as the moves below assume nothing else */
	return c ? c : (i > j) - (i < j);
}

int array_sort_large(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	struct by_index x = {base, size, cmp};
	char *a = base, *held;
	size_t *order;
	size_t i = 1;

	while (i < n && cmp(a + (i - 1) * size, a + i * size) <= 0)
		i++;
	if (i >= n)
		return 0;
	order = malloc(n * sizeof(*order));
	held = malloc(size);
	if (!order || !held) {
		free(order);
		free(held);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_index, &x);
	/*
	 * Position i wants element order[i]: follow each cycle of that
	 * permutation, holding its first element aside; a done position is
	 * marked order[i] == i.
	 */
	for (size_t start = 0; start < n; start++) {
		size_t at = start;

		if (order[start] == start)
			continue;
		memcpy(held, a + start * size, size);
		while (order[at] != start) {
			size_t from = order[at];

			memcpy(a + at * size, a + from * size, size);
			order[at] = at;
			at = from;
		}
		memcpy(a + at * size, held, size);
		order[at] = at;
	}
	free(order);
	free(held);
	return 0;
}
