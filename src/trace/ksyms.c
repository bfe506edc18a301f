// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "ksyms.h"

enum ksym_state ksym_lookup(const char *path, const char *name)
{
	enum ksym_state state = KSYM_ABSENT;
	size_t len = strlen(name);
	char line[512], sym[256], type;
	FILE *f = fopen(path ? path : "/proc/kallsyms", "r");

	if (!f)
		return KSYM_ABSENT;
	while (fgets(line, sizeof(line), f)) {
		/* "ffffffffc0a1b2c0 t direct_page_fault\t[kvm]" */
		if (sscanf(line, "%*s %c %255s", &type, sym) != 2)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (!strcmp(sym, name)) {
			state = KSYM_PRESENT;
			break;
		}
		if (!strncmp(sym, name, len) && sym[len] == '.')
			state = KSYM_ONLY_CLONE;
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
