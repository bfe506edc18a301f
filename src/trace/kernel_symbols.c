// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_symbols.h"
#include "array.h"

struct kernel_symbol {
	__u64 addr;
	size_t name;   /* offsets into the pool */
	size_t module; /* 0: the kernel's own (the pool starts with an empty string) */
};

struct kernel_symbols {
	struct kernel_symbol *syms;
	size_t n, cap;
	char *pool;
	size_t pool_len, pool_cap;
};

/* S (LEN bytes) appended to the pool with its NUL; its offset, or 0 when memory ran out. */
static size_t pool_add(struct kernel_symbols *ks, const char *s, size_t len)
{
	char *pool = array_grow(ks->pool, ks->pool_len + len + 1, &ks->pool_cap, 1);
	size_t at = ks->pool_len;

	if (!pool)
		return 0;
	ks->pool = pool;
	memcpy(pool + at, s, len);
	pool[at + len] = '\0';
	ks->pool_len += len + 1;
	return at;
}

/*
 * One kallsyms line, "ffffffffc0a1b2c0 t direct_page_fault\t[kvm]": its
 * text symbol added; 0, or -ENOMEM. Other types (data, absolute) are skipped.
 */
static int add_line(struct kernel_symbols *ks, char *line, size_t *last_module)
{
	char *end, *name, *module;
	struct kernel_symbol *syms;
	__u64 addr = strtoull(line, &end, 16);

	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	if (!strchr("tTwW", end[1]))
		return 0;
	name = end + 3;
	module = name + strcspn(name, " \t\n");
	if (module == name)
		return 0;
	syms = array_grow(ks->syms, ks->n + 1, &ks->cap, sizeof(*ks->syms));
	if (!syms)
		return -ENOMEM;
	ks->syms = syms;
	syms[ks->n] =
		(struct kernel_symbol){.addr = addr, .name = pool_add(ks, name, module - name)};
	if (*module == '\t') {
		module++;
		module[strcspn(module, "\n")] = '\0';
		/* a module's symbols come together: its name once */
		if (!*last_module || strcmp(ks->pool + *last_module, module))
			*last_module = pool_add(ks, module, strlen(module));
		syms[ks->n].module = *last_module;
	}
	if (!syms[ks->n].name)
		return -ENOMEM;
	ks->n++;
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct kernel_symbol *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct kernel_symbols *kernel_symbols_load(const char *path)
{
	struct kernel_symbols *ks = calloc(1, sizeof(*ks));
	size_t last_module = 0;
	bool any_addr = false;
	char line[512];
	int err = 0;
	FILE *f;

	if (!ks)
		return NULL;
	f = fopen(path ? path : "/proc/kallsyms", "r");
	if (!f) {
		err = errno;
		goto fail;
	}
	pool_add(ks, "", 0); /* offset 0: no module (checked below) */
	if (!ks->pool)
		err = ENOMEM;
	while (!err && fgets(line, sizeof(line), f)) {
		err = -add_line(ks, line, &last_module);
		any_addr |= ks->n && ks->syms[ks->n - 1].addr;
	}
	fclose(f);
	/* kptr_restrict: every address reads 0, and no frame could be named */
	if (!err && !any_addr)
		err = ENOENT;
	if (err)
		goto fail;
	qsort(ks->syms, ks->n, sizeof(*ks->syms), by_addr);
	return ks;
fail:
	kernel_symbols_free(ks);
	errno = err;
	return NULL;
}

bool kernel_symbols_name(const struct kernel_symbols *ks, __u64 addr, char *buf, size_t len)
{
	size_t lo = 0, hi = ks ? ks->n : 0;
	const struct kernel_symbol *s;

	/* the last symbol at or below ADDR */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo) {
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
		return false;
	}
	s = &ks->syms[lo - 1];
	snprintf(buf, len, "%s+0x%llx%s%s", ks->pool + s->name,
		 (unsigned long long)(addr - s->addr), s->module ? " " : "",
		 s->module ? ks->pool + s->module : "");
	return true;
}

void kernel_symbols_free(struct kernel_symbols *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->pool);
	free(ks);
}
