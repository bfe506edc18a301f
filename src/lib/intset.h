/* SPDX-License-Identifier: GPL-2.0 */
/* A set of ints kept sorted: lookups in O(log n) over a long run's thousands of pids. */
#ifndef KVMMMU_INTSET_H
#define KVMMMU_INTSET_H

#include <stdbool.h>
#include <stddef.h>

struct intset {
	int *v; /* sorted, no duplicates */
	size_t n, cap;
};

bool intset_has(const struct intset *s, int x);
/* Adds X (nothing if it is there): 0, or -ENOMEM with S unchanged. */
int intset_add(struct intset *s, int x);
void intset_remove(struct intset *s, int x);
void intset_free(struct intset *s);

#endif
