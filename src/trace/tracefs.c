// SPDX-License-Identifier: GPL-2.0
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "tracefs.h"

const char *tracefs_dir(void)
{
	static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	static const char *found;

	if (found)
		return found;
	for (size_t i = 0; i < 2; i++) {
		char probe[PATH_MAX];

		snprintf(probe, sizeof(probe), "%s/events", dirs[i]);
		if (!access(probe, F_OK))
			return found = dirs[i];
	}
	/* Not mounted by default on some hosts (this project's CI among them). */
	if (!mount("nodev", dirs[0], "tracefs", 0, NULL))
		return found = dirs[0];
	return NULL;
}

char *tracefs_read_format(const char *group, const char *event)
{
	const char *dir = tracefs_dir();
	char path[PATH_MAX], *buf = NULL;
	size_t len = 0;
	FILE *f, *out;

	if (!dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, group, event);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	out = open_memstream(&buf, &len);
	if (out) {
		char chunk[4096];
		size_t n;

		while ((n = fread(chunk, 1, sizeof(chunk), f)))
			fwrite(chunk, 1, n, out);
		fclose(out);
	}
	fclose(f);
	return buf;
}

bool tracefs_format_has_field(const char *fmt, const char *field)
{
	size_t len = strlen(field);

	/* "\tfield:TYPE NAME;" or "NAME[N];": the name ends the declaration */
	for (const char *p = strstr(fmt, "field:"); p; p = strstr(p + 1, "field:")) {
		const char *end = strchr(p, ';'), *name;

		if (!end)
			break;
		for (name = end; name > p && name[-1] != ' ' && name[-1] != ':'; name--)
			;
		if (!strncmp(name, field, len) && (name[len] == ';' || name[len] == '['))
			return true;
	}
	return false;
}

bool tracefs_event_has_field(const char *group, const char *event, const char *field)
{
	char *fmt = tracefs_read_format(group, event);
	bool has;

	if (!fmt)
		return false;
	has = tracefs_format_has_field(fmt, field);
	free(fmt);
	return has;
}

bool tracefs_has_event(const char *group, const char *event)
{
	const char *dir = tracefs_dir();
	char path[PATH_MAX];

	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/events/%s/%s", dir, group, event);
	return !access(path, F_OK);
}

bool tracefs_has_kprobe_events(void)
{
	const char *dir = tracefs_dir();
	char path[PATH_MAX];

	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/kprobe_events", dir);
	return !access(path, W_OK);
}
