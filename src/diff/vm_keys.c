// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm_keys.h"
#include "array.h"
#include "hash.h"

static int add(struct vm_keys *k, int pid, int index, const char *base)
{
	struct vm_key *v = array_grow(k->v, k->n + 1, &k->cap, sizeof(*k->v));

	if (!v)
		return -ENOMEM;
	k->v = v;
	k->v[k->n] = (struct vm_key){.pid = pid, .index = index ? index : 1, .base = base};
	k->v[k->n].seen = k->n;
	k->n++;
	return 0;
}

static int cmp_place(const void *a, const void *b)
{
	const struct vm_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* By place, and the first seen of a place first (qsort keeps no order of its own). */
static int cmp_seen(const void *a, const void *b)
{
	const struct vm_key *x = a, *y = b;
	int c = cmp_place(a, b);

	return c ? c : x->seen < y->seen ? -1 : x->seen > y->seen;
}

/*
 * The order instances of one name are numbered in, the same in every run:
 * a process's VMs in the order it made them (its selftests' VM 2 is "#2"
 * in every run), processes by pid, the order they started in.
 */
static int cmp_instance(const void *a, const void *b)
{
	const struct vm_key *x = *(const struct vm_key *const *)a,
			    *y = *(const struct vm_key *const *)b;
	int c = strcmp(x->base, y->base);

	if (c)
		return c;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The keys given so far: open addressing, a power of two at least twice N. */
struct taken {
	const char **slot;
	size_t cap;
};

/* Whether KEY was taken; takes it when not. */
static bool take(struct taken *t, const char *key)
{
	size_t at = hash_str(HASH_INIT, key) & (t->cap - 1);

	for (; t->slot[at]; at = (at + 1) & (t->cap - 1))
		if (!strcmp(t->slot[at], key))
			return true;
	t->slot[at] = key;
	return false;
}

/* BASE's instance I as a key, cut to fit with its " #I" kept. */
static void make_key(char *buf, const char *base, size_t i)
{
	char suffix[24] = "";
	int room;

	if (i > 1)
		snprintf(suffix, sizeof(suffix), " #%zu", i);
	room = VM_KEY_MAX - 1 - (int)strlen(suffix);
	snprintf(buf, VM_KEY_MAX, "%.*s%s", room, base, suffix);
}

/*
 * Every name's first instance keeps it; the others are "NAME #2", ... in
 * cmp_instance's order, past any key already taken (a VM named "web #2",
 * or two long names cut alike): no two VMs ever share a key.
 */
static int number(struct vm_keys *k)
{
	struct vm_key **order = calloc(k->n ? k->n : 1, sizeof(*order));
	struct taken t = {.cap = 16};
	int err = -ENOMEM;

	while (t.cap < 2 * k->n)
		t.cap *= 2;
	t.slot = calloc(t.cap, sizeof(*t.slot));
	if (!order || !t.slot)
		goto out;
	for (size_t i = 0; i < k->n; i++)
		order[i] = &k->v[i];
	qsort(order, k->n, sizeof(*order), cmp_instance);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0, nth = 1; i < k->n; i++) {
			struct vm_key *v = order[i];

			nth = i && !strcmp(order[i - 1]->base, v->base) ? nth + 1 : 1;
			/* first instances first: a later one never takes a name's own */
			if ((nth == 1) != (pass == 0))
				continue;
			for (size_t at = nth;; at++) {
				make_key(v->key, v->base, at);
				if (!take(&t, v->key))
					break;
			}
		}
	err = 0;
out:
	free(order);
	free(t.slot);
	return err;
}

int vm_keys_build(struct vm_keys *k, const struct snapshot *snap, const struct csv_table *table)
{
	size_t n = 0;
	int err;

	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < snap->m.n_vms; i++) {
		const struct vm_row *vm = &snap->m.vms[i];

		err = add(k, vm->pid, vm->index, vm->name ? vm->name : vm->comm);
		if (err)
			return err;
	}
	/* kvmmmu-load's own figures: of a VM the snapshot may not hold */
	for (size_t i = 0; i < table->n_rows; i++) {
		const struct csv_record *c = &table->rows[i];

		if (strcmp(c->source, "load") || c->vcpu != CSV_NO_VCPU)
			continue;
		err = add(k, c->pid, c->vm_index, c->vm ? c->vm : c->comm);
		if (err)
			return err;
	}
	/* one entry a VM: the first seen of its (pid, index) (no VM: no array to sort) */
	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), cmp_seen);
	for (size_t i = 0; i < k->n; i++)
		if (!n || cmp_place(&k->v[n - 1], &k->v[i]))
			k->v[n++] = k->v[i];
	k->n = n;
	return number(k);
}

const char *vm_keys_find(const struct vm_keys *k, int pid, int index)
{
	struct vm_key want = {.pid = pid, .index = index ? index : 1};
	const struct vm_key *v = k->n ? bsearch(&want, k->v, k->n, sizeof(*k->v), cmp_place) : NULL;

	return v ? v->key : NULL;
}

void vm_keys_free(struct vm_keys *k)
{
	free(k->v);
	memset(k, 0, sizeof(*k));
}
