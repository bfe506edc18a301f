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

int regions_add_all(struct regions *r, const struct regions *src)
{
	struct region_count *items;

	if (!src->n)
		return 0;
	items = array_grow(r->items, r->n + src->n, &r->cap, sizeof(*items));
	if (!items)
		return -ENOMEM;
	r->items = items;
	memcpy(items + r->n, src->items, src->n * sizeof(*items));
	r->n += src->n;
	return 0;
}

static int cmp_u64(__u64 a, __u64 b)
{
	return a < b ? -1 : a > b;
}

static int cmp_region(const void *pa, const void *pb)
{
	const struct region_count *a = pa, *b = pb;
	int c = cmp_u64((__u32)a->pid, (__u32)b->pid);

	if (!c)
		c = cmp_u64((__u32)a->vm_index, (__u32)b->vm_index);
	if (!c)
		c = cmp_u64(a->epoch, b->epoch);
	if (!c)
		c = cmp_u64((__u32)a->slot, (__u32)b->slot);
	return c ? c : cmp_u64(a->base, b->base);
}

void regions_merge(struct regions *r)
{
	size_t kept = 0;

	if (r->n < 2)
		return;
	qsort(r->items, r->n, sizeof(*r->items), cmp_region);
	for (size_t i = 1; i < r->n; i++) {
		if (!cmp_region(&r->items[kept], &r->items[i]))
			r->items[kept].faults += r->items[i].faults;
		else
			r->items[++kept] = r->items[i];
	}
	r->n = kept + 1;
}

size_t regions_filter(struct regions *r, bool (*keep)(const struct region_count *c, void *ctx),
		      void *ctx)
{
	size_t kept = 0, n = r->n;

	for (size_t i = 0; i < n; i++)
		if (keep(&r->items[i], ctx))
			r->items[kept++] = r->items[i];
	r->n = kept;
	return n - kept;
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
