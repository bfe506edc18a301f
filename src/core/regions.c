// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "regions.h"
#include "array.h"

int regions_add(struct regions *r, const struct region_count *c)
{
	struct region_count *items = array_grow(r->items, r->n + 1, &r->cap, sizeof(*items));

	if (!items)
		return -ENOMEM;
	r->items = items;
	items[r->n++] = *c;
	return 0;
}

size_t regions_top(const struct regions *r, int pid, int vm_index, const struct region_count **out,
		   size_t max)
{
	size_t n = 0;

	/* insertion into the MAX kept, most faults first: MAX is small, a VM's regions few */
	for (size_t i = 0; i < r->n; i++) {
		const struct region_count *c = &r->items[i];
		size_t at;

		if (c->pid != pid || c->vm_index != vm_index)
			continue;
		for (at = n; at > 0 && out[at - 1]->faults < c->faults; at--)
			if (at < max)
				out[at] = out[at - 1];
		if (at < max) {
			out[at] = c;
			if (n < max)
				n++;
		}
	}
	return n;
}

__u64 regions_vm_total(const struct regions *r, int pid, int vm_index)
{
	__u64 sum = 0;

	for (size_t i = 0; i < r->n; i++)
		if (r->items[i].pid == pid && r->items[i].vm_index == vm_index)
			sum += r->items[i].faults;
	return sum;
}

int regions_copy(struct regions *dst, const struct regions *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->size = src->size;
	if (!src->n)
		return 0;
	dst->items = malloc(src->n * sizeof(*dst->items));
	if (!dst->items)
		return -ENOMEM;
	memcpy(dst->items, src->items, src->n * sizeof(*dst->items));
	dst->n = dst->cap = src->n;
	return 0;
}

void regions_free(struct regions *r)
{
	free(r->items);
	memset(r, 0, sizeof(*r));
}
