// SPDX-License-Identifier: GPL-2.0
#include <stdint.h>
#include <stdlib.h>

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
