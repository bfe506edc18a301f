// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "side.h"
#include "log.h"

/* What a column's name may hold: it heads a CSV column and a terminal's. */
static bool name_ok(const char *name, size_t len)
{
	if (!len || len > SIDE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._+-:@", name[i]))
			return false;
	return true;
}

/* "dir/n1.csv" -> "n1"; empty when that is no name (too long, odd bytes). */
static void name_after_file(char *buf, size_t len, const char *path)
{
	const char *base = strrchr(path, '/'), *end;

	base = base ? base + 1 : path;
	end = base + strcspn(base, ",");
	if (end - base > 4 && !strncmp(end - 4, ".csv", 4))
		end -= 4;
	buf[0] = '\0';
	if (name_ok(base, (size_t)(end - base)))
		snprintf(buf, len, "%.*s", (int)(end - base), base);
}

int side_load(struct side *s, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *list, *rest, *f, err[512];

	/* NAME=FILES: a name without '/' before the '=' (a path may hold '=' further on) */
	if (eq && eq > arg && !memchr(arg, '/', (size_t)(eq - arg))) {
		if (!name_ok(arg, (size_t)(eq - arg))) {
			elog("'%.*s': a side's name is 1 to %d letters, digits or ._+-:@",
			     (int)(eq - arg), arg, SIDE_NAME_MAX);
			return SIDE_USAGE;
		}
		snprintf(s->name, sizeof(s->name), "%.*s", (int)(eq - arg), arg);
		s->named = true;
		list = strdup(eq + 1);
	} else if (eq == arg) {
		elog("'%s': a side's name is empty (NAME=FILES)", arg);
		return SIDE_USAGE;
	} else {
		/* one file: its name; several: a letter (sides_settle_names) */
		if (!strchr(arg, ','))
			name_after_file(s->name, sizeof(s->name), arg);
		list = strdup(arg);
	}
	if (!list)
		return -ENOMEM;
	for (rest = list; (f = strsep(&rest, ","));) {
		/* "a.csv,,b.csv" or "N=a.csv,": a slip, not a run fewer */
		if (!*f && (s->n || rest)) {
			elog("side %s: an empty file name in its list", s->name[0] ? s->name : arg);
			free(list);
			return SIDE_USAGE;
		}
		if (!*f)
			break; /* "N=": no files, said below */
		if (s->n == MAX_RUNS) {
			elog("side %s: more than %d runs", s->name[0] ? s->name : arg, MAX_RUNS);
			free(list);
			return SIDE_USAGE;
		}
		if (run_load(&s->runs[s->n], f, err, sizeof(err))) {
			run_free(&s->runs[s->n]); /* what it read before it refused */
			elog("%s", err);
			free(list);
			return -EINVAL;
		}
		s->n++;
	}
	free(list);
	if (!s->n) {
		elog("side %s has no files", s->name[0] ? s->name : arg);
		return SIDE_USAGE;
	}
	return 0;
}

static bool name_taken(struct side **sides, size_t n, size_t self)
{
	for (size_t i = 0; i < n; i++)
		if (i != self && !strcmp(sides[i]->name, sides[self]->name))
			return true;
	return false;
}

int sides_settle_names(struct side **sides, size_t n)
{
	bool letters = false;

	for (size_t i = 0; i < n; i++) {
		if (sides[i]->named && name_taken(sides, n, i)) {
			elog("two sides are named %s", sides[i]->name);
			return -EINVAL;
		}
		letters |= !sides[i]->named && (!sides[i]->name[0] || name_taken(sides, n, i));
	}
	if (!letters)
		return 0;
	/* by place, as before file names: A, B, ...; past a name the user gave */
	for (size_t i = 0; i < n; i++) {
		if (sides[i]->named)
			continue;
		snprintf(sides[i]->name, sizeof(sides[i]->name), "%c", (char)('A' + i));
		if (name_taken(sides, n, i))
			snprintf(sides[i]->name, sizeof(sides[i]->name), "side%zu", i + 1);
	}
	return 0;
}

/* A run's file, as stat() names it: one file under two paths is one. */
struct file_id {
	dev_t dev;
	ino_t ino;
	const char *path;
};

int sides_check_files(struct side **sides, size_t n)
{
	struct file_id *seen;
	size_t n_seen = 0, total = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		total += sides[i]->n;
	seen = calloc(total ? total : 1, sizeof(*seen));
	if (!seen) {
		elog("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !err; i++)
		for (size_t k = 0; k < sides[i]->n && !err; k++) {
			const char *path = sides[i]->runs[k].path;
			struct stat st;

			if (stat(path, &st))
				continue; /* read a moment ago: nothing to compare */
			for (size_t j = 0; j < n_seen; j++)
				if (seen[j].dev == st.st_dev && seen[j].ino == st.st_ino) {
					elog("'%s' and '%s' are the same file: a run counts once, "
					     "on one side",
					     seen[j].path, path);
					err = SIDE_USAGE;
					break;
				}
			seen[n_seen++] = (struct file_id){st.st_dev, st.st_ino, path};
		}
	free(seen);
	return err;
}

void side_free(struct side *s)
{
	for (size_t i = 0; i < s->n; i++)
		run_free(&s->runs[i]);
	s->n = 0;
}

void side_pool(const struct side *s, const struct scalar *k, struct kvmmmu_hist *h)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < s->n; i++) {
		const struct scalar *x = run_find(&s->runs[i], k->vm, k->vcpu, k->metric);

		if (!x || !x->hist)
			continue;
		for (__u32 b = 0; b < KVMMMU_HIST_BUCKETS; b++)
			h->slots[b] += x->hist->slots[b];
		h->count += x->hist->count;
	}
}
