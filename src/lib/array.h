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

/*
 * Sorts the N elements of SIZE bytes at BASE by CMP, as qsort() does, for
 * elements too large to move often (a model's rows, 17 KiB each): an array
 * already in order is left as it is, and any other is sorted by index, then
 * each element moves once. qsort() copies every element some log2(N) times
 * into a buffer of its own. 0, or -ENOMEM (BASE untouched).
 */
int array_sort_large(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
