// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-top --slower: the slow faults the session reports, the newest
 * TOP_SLOW_KEPT kept for 'l' in a vCPU's view, those of the last refresh
 * for batch frames and the CSV.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

/* The oldest of KEPT dropped (their stacks freed) until at most MAX remain. */
static void trim(struct slow_faults *kept, size_t max)
{
	size_t drop = kept->n > max ? kept->n - max : 0;

	if (!drop)
		return; /* (nothing kept yet: items may be NULL) */
	for (size_t i = 0; i < drop; i++)
		free(kept->items[i].stack);
	memmove(kept->items, kept->items + drop, (kept->n - drop) * sizeof(*kept->items));
	kept->n -= drop;
}

int top_slow_take(struct top *t)
{
	int err;

	if (!t->env.slower_ns)
		return 0;
	/* the last refresh's join the kept ones; then this refresh's arrive */
	err = slow_faults_take(&t->slow, &t->slow_new);
	trim(&t->slow, TOP_SLOW_KEPT);
	if (!err)
		err = session_take_slow(&t->s, &t->slow_new);
	if (err)
		return err;
	t->slow_seen += t->slow_new.n;
	if (t->csv_open && t->slow_new.n)
		err = render_csv_slow(&t->csv, &t->slow_new, &t->facts);
	return err;
}

/* Whether slow fault S is of the vCPU the view shows. */
static bool of_vcpu(const struct top *t, const struct slow_fault *s)
{
	return (int)s->rec.tgid == t->vm_pid && s->vm_index == t->vm_index &&
	       s->rec.vcpu_id == t->vcpu;
}

char *top_slow_text(const struct top *t)
{
	struct slow_faults mine = {};
	const struct slow_faults *lists[] = {&t->slow_new, &t->slow};
	size_t len = 0, shown = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "slow faults of vCPU %d, newest first (l: back to its histogram):\n", t->vcpu);
	if (!t->env.slower_ns) {
		fprintf(f, "  none recorded: start kvmmmu-top with --slower MS (and --stack for "
			   "where they waited)\n");
		goto out;
	}
	/* newest first: the last refresh's from its end, then the kept ones' */
	mine.items = calloc(TOP_SLOW_KEPT + t->slow_new.n + 1, sizeof(*mine.items));
	for (size_t l = 0; mine.items && l < 2; l++)
		for (size_t i = lists[l]->n; i-- > 0;)
			if (of_vcpu(t, &lists[l]->items[i]))
				mine.items[mine.n++] = lists[l]->items[i]; /* shared, not owned */
	shown = mine.n;
	render_slow_header(f, &t->facts, t->env.slower_ns);
	if (mine.items)
		render_slow(f, &mine, &t->facts);
	if (!shown)
		fprintf(f, "  none of this vCPU yet (%llu of all VMs since the start)\n",
			(unsigned long long)t->slow_seen);
	free(mine.items); /* the items' stacks stay with their lists */
out:
	fclose(f);
	return buf;
}

void top_slow_free(struct top *t)
{
	slow_faults_free(&t->slow);
	slow_faults_free(&t->slow_new);
}
