// SPDX-License-Identifier: GPL-2.0
/*
 * The report's sections by name: --metric lists ("all", "default" and
 * section names) parsed into the sections to show, and each section's name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

static const char *const section_names[SECTION_HIST0] = {
	"outcomes",  "paths",	 "access", "levels",   "memslot", "events",
	"kvm_stats", "mmu_lock", "mmu",	   "timeline", "phases",  "regions"};

const char *section_name(int section)
{
	return section < SECTION_HIST0 ? section_names[section]
				       : kvmmmu_hist_names[section - SECTION_HIST0];
}

/*
 * Sets SHOW's sections named in LIST; -EINVAL with the bad name in *bad. An
 * empty name ("", "default,,") is a bad one: strsep() keeps it, where
 * strtok_r() skipped it unseen.
 */
static int parse_metrics_into(const char *list, bool show[N_SECTIONS], const char **bad)
{
	static char failed[64];
	char *copy = strdup(list), *rest = copy, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	while (!err && (tok = strsep(&rest, ","))) {
		int found = -1;

		if (!strcmp(tok, "all")) {
			for (int s = 0; s < N_SECTIONS; s++)
				show[s] = true;
			continue;
		}
		if (!strcmp(tok, "default")) {
			err = parse_metrics_into(RENDER_DEFAULT_METRICS, show, bad);
			continue;
		}
		for (int s = 0; s < N_SECTIONS; s++)
			if (!strcmp(tok, section_name(s)))
				found = s;
		if (found < 0) {
			snprintf(failed, sizeof(failed), "%s", tok);
			*bad = failed;
			err = -EINVAL;
		} else {
			show[found] = true;
		}
	}
	free(copy);
	return err;
}

int render_parse_metrics(const char *list, bool show[N_SECTIONS], const char **bad)
{
	memset(show, 0, N_SECTIONS * sizeof(show[0]));
	return parse_metrics_into(list, show, bad);
}
