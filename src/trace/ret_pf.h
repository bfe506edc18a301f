/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RET_PF_* outcome values of the running kernel. The enum is anonymous and
 * was renumbered in 5.19 (CONTINUE) and 6.12 (WRITE_PROTECTED), so the values
 * are read from BTF, or from the fast_page_fault tracepoint format, never
 * hard-coded.
 */
#ifndef KVMMMU_RET_PF_H
#define KVMMMU_RET_PF_H

#include <stdbool.h>

#include "ret_pf_table.h"

struct btf;

/* Scans every enum in BTF for RET_PF_ enumerators; -ENOENT when there are none. */
int ret_pf_from_btf(struct ret_pf_table *t, const struct btf *btf);
/*
 * Parses a tracefs format of kvmmmu:fast_page_fault. With the enum-export fix
 * (5.15+) its print fmt reads "REC->ret == 6, REC->ret == 5" for SPURIOUS and
 * FIXED; without it, the literal enumerator names (-ENOENT). INVALID is
 * FIXED - 1 in every layout; the other values are left unknown.
 */
int ret_pf_from_format(struct ret_pf_table *t, const char *format_text);
/* Whether the format text still shows the literal enum names (fix missing). */
bool ret_pf_format_lacks_enum_fix(const char *format_text);

#endif
