/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names of the RET_PF_* outcome values, as the running kernel numbers
 * them (src/trace/ret_pf.c reads them), or as a CSV file wrote them.
 */
#ifndef KVMMMU_RET_PF_TABLE_H
#define KVMMMU_RET_PF_TABLE_H

#include <stdbool.h>
#include <linux/types.h>

#include "kvmmmu.h"

enum ret_pf_source {
	RET_PF_FROM_NONE,
	RET_PF_FROM_BTF,
	RET_PF_FROM_TRACEFS,
};

struct ret_pf_table {
	enum ret_pf_source source;
	/* lower-case name without the prefix ("fixed"), NULL where no enumerator has that value */
	char *name[KVMMMU_RET_PF_SLOTS];
};

/* Value of the named outcome ("fixed"), -1 when unknown. */
int ret_pf_value(const struct ret_pf_table *t, const char *name);
void ret_pf_free(struct ret_pf_table *t);
/*
 * Whether outcome NAME is listed even with no fault: not CONTINUE and INVALID
 * (they never leave the handler), nor "error" (a handler's negative return).
 */
bool ret_pf_listed_when_zero(const char *name);

#endif
