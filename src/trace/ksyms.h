/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_KSYMS_H
#define KVMMMU_KSYMS_H

#include <stdbool.h>
#include <stddef.h>

enum ksym_state {
	KSYM_ABSENT,	 /* no such symbol: inlined or not built */
	KSYM_PRESENT,	 /* an exact text symbol */
	KSYM_ONLY_CLONE, /* only a compiler copy (.part.N, .isra.N, .constprop.N, .cold) */
};

/*
 * Looks NAME up in /proc/kallsyms (or the file at PATH, for tests). A
 * compiler-made copy does not count: probing it would miss the inlined callers.
 */
enum ksym_state ksym_lookup(const char *path, const char *name);
/*
 * Looks all of NAMES up in /proc/kallsyms in one pass (120k lines: a pass
 * costs ~12 ms) and keeps the answers for later ksym_lookup(NULL, ...) calls.
 */
void ksym_prefetch(const char *const *names, size_t n);
const char *ksym_state_str(enum ksym_state s);

#endif
