// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "intset.h"

/* Where X is, or would go. */
static size_t position(const struct intset *s, int x)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool intset_has(const struct intset *s, int x)
{
	size_t at = position(s, x);

	return at < s->n && s->v[at] == x;
}

int intset_add(struct intset *s, int x)
{
	size_t at = position(s, x);
	int *v;

	if (at < s->n && s->v[at] == x)
		return 0;
	v = array_grow(s->v, s->n + 1, &s->cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->v = v;
	memmove(&v[at + 1], &v[at], (s->n - at) * sizeof(*v));
	v[at] = x;
	s->n++;
	return 0;
}

void intset_remove(struct intset *s, int x)
{
	size_t at = position(s, x);

	if (at == s->n || s->v[at] != x)
		return;
	memmove(&s->v[at], &s->v[at + 1], (s->n - at - 1) * sizeof(*s->v));
	s->n--;
}

void intset_free(struct intset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
