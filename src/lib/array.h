/* SPDX-License-Identifier: GPL-2.0 */
/* Growing arrays. */
#ifndef KVMMMU_ARRAY_H
#define KVMMMU_ARRAY_H

#include <stddef.h>

/*
 * ARRAY (of *CAP elements of SIZE bytes) with room for NEED, grown
 * geometrically: appending N elements one by one copies O(N) in all, not
 * O(N^2) (a long run appends thousands of VMs, threads and events, and
 * realloc cannot always grow in place). Returns the array, perhaps moved,
 * or NULL (ARRAY untouched) when memory runs out.
 */
void *array_grow(void *array, size_t need, size_t *cap, size_t size);

#endif
