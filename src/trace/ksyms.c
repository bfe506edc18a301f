// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "ksyms.h"

#define KSYM_CACHE 32

/* Answers of ksym_prefetch(), for /proc/kallsyms only. */
static struct {
	const char *name;
	enum ksym_state state;
} cache[KSYM_CACHE];
static size_t n_cached;

/*
 * The type and name of kallsyms line LINE, "ffffffffc0a1b2c0 t direct_page_fault\t[kvm]"
 * (the name ends at a tab, a space or the line's end; LINE is cut there), or
 * NULL. By hand: sscanf() over 200,000 lines is most of a slow host's start.
 */
static const char *parse_line(char *line, char *type)
{
	char *p = strchr(line, ' '), *name;

	if (!p || !p[1] || p[2] != ' ')
		return NULL;
	*type = p[1];
	name = p + 3;
	name[strcspn(name, " \t\n")] = '\0';
	return *name ? name : NULL;
}

/* STATE updated for a kallsyms line naming SYM, when looking for NAME. */
static enum ksym_state match(const char *sym, const char *name, enum ksym_state state)
{
	size_t len = strlen(name);

	if (!strcmp(sym, name))
		return KSYM_PRESENT;
	if (state == KSYM_ABSENT && !strncmp(sym, name, len) && sym[len] == '.')
		return KSYM_ONLY_CLONE;
	return state;
}

void ksym_prefetch(const char *const *names, size_t n)
{
	char line[512], type;
	const char *sym;
	FILE *f = fopen("/proc/kallsyms", "r");

	n_cached = 0;
	for (size_t i = 0; i < n && n_cached < KSYM_CACHE; i++)
		cache[n_cached++] = (typeof(cache[0])){names[i], KSYM_ABSENT};
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sym = parse_line(line, &type);
		if (!sym || (type != 't' && type != 'T'))
			continue;
		for (size_t i = 0; i < n_cached; i++)
			cache[i].state = match(sym, cache[i].name, cache[i].state);
	}
	fclose(f);
}

enum ksym_state ksym_lookup(const char *path, const char *name)
{
	enum ksym_state state = KSYM_ABSENT;
	char line[512], type;
	const char *sym;
	FILE *f;

	for (size_t i = 0; !path && i < n_cached; i++)
		if (!strcmp(cache[i].name, name))
			return cache[i].state;
	f = fopen(path ? path : "/proc/kallsyms", "r");
	if (!f)
		return KSYM_ABSENT;
	while (fgets(line, sizeof(line), f)) {
		sym = parse_line(line, &type);
		if (!sym || (type != 't' && type != 'T'))
			continue;
		state = match(sym, name, state);
		if (state == KSYM_PRESENT)
			break;
	}
	fclose(f);
	return state;
}

const char *ksym_state_str(enum ksym_state s)
{
	switch (s) {
	case KSYM_PRESENT:
		return "present";
	case KSYM_ONLY_CLONE:
		return "only a compiler clone (.part/.isra/.constprop/.cold): inlined";
	default:
		return "not in kallsyms: inlined or not built";
	}
}
