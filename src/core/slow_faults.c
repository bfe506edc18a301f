// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slow_faults.h"
#include "array.h"

void slow_faults_append(struct slow_faults *l, const struct kvmmmu_slow_fault *rec, int vm_index,
			const char *vm, double wall, char *stack)
{
	struct slow_fault *items = l->n < SLOW_FAULTS_MAX
					   ? array_grow(l->items, l->n + 1, &l->cap, sizeof(*items))
					   : NULL;

	if (!items) {
		l->dropped++;
		free(stack);
		return;
	}
	l->items = items;
	items[l->n] = (struct slow_fault){
		.rec = *rec, .vm_index = vm_index, .wall = wall, .stack = stack};
	snprintf(items[l->n].vm, sizeof(items[l->n].vm), "%s", vm);
	l->n++;
}

int slow_faults_take(struct slow_faults *to, struct slow_faults *from)
{
	struct slow_fault *items;

	if (!from->n)
		return 0;
	items = array_grow(to->items, to->n + from->n, &to->cap, sizeof(*items));
	if (!items)
		return -ENOMEM;
	to->items = items;
	memcpy(to->items + to->n, from->items, from->n * sizeof(*from->items));
	to->n += from->n;
	to->dropped += from->dropped;
	from->n = 0;
	from->dropped = 0;
	return 0;
}

void slow_faults_free(struct slow_faults *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i].stack);
	free(l->items);
	memset(l, 0, sizeof(*l));
}
