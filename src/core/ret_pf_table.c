// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "ret_pf_table.h"

int ret_pf_value(const struct ret_pf_table *t, const char *name)
{
	for (int i = 0; i < KVMMMU_RET_PF_SLOTS; i++)
		if (t->name[i] && !strcmp(t->name[i], name))
			return i;
	return -1;
}

void ret_pf_free(struct ret_pf_table *t)
{
	for (int i = 0; i < KVMMMU_RET_PF_SLOTS; i++) {
		free(t->name[i]);
		t->name[i] = NULL;
	}
	t->source = RET_PF_FROM_NONE;
}

bool ret_pf_listed_when_zero(const char *name)
{
	return strcmp(name, "continue") && strcmp(name, "invalid") && strcmp(name, "error");
}
