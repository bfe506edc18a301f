// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <bpf/btf.h>
#include <stdlib.h>
#include <string.h>

#include "ret_pf.h"

static int set_name(struct ret_pf_table *t, long long value, const char *enumerator)
{
	char *lower;

	if (value < 0 || value >= KVMMMU_RET_PF_ERROR)
		return -ERANGE;
	lower = strdup(enumerator + strlen("RET_PF_"));
	if (!lower)
		return -ENOMEM;
	for (char *p = lower; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	free(t->name[value]);
	t->name[value] = lower;
	return 0;
}

/* The slot of a handler's negative return: not a RET_PF_* value, but an outcome all the same. */
static int name_error(struct ret_pf_table *t)
{
	free(t->name[KVMMMU_RET_PF_ERROR]);
	t->name[KVMMMU_RET_PF_ERROR] = strdup("error");
	return t->name[KVMMMU_RET_PF_ERROR] ? 0 : -ENOMEM;
}

int ret_pf_from_btf(struct ret_pf_table *t, const struct btf *btf)
{
	__u32 n = btf__type_cnt(btf);
	int found = 0;

	memset(t, 0, sizeof(*t));
	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *type = btf__type_by_id(btf, id);

		if (btf_is_enum(type)) {
			const struct btf_enum *e = btf_enum(type);

			for (int i = 0; i < btf_vlen(type); i++) {
				const char *name = btf__name_by_offset(btf, e[i].name_off);

				if (name && !strncmp(name, "RET_PF_", 7) &&
				    !set_name(t, e[i].val, name))
					found++;
			}
		} else if (btf_is_enum64(type)) {
			const struct btf_enum64 *e = btf_enum64(type);

			for (int i = 0; i < btf_vlen(type); i++) {
				const char *name = btf__name_by_offset(btf, e[i].name_off);

				if (name && !strncmp(name, "RET_PF_", 7) &&
				    !set_name(t, btf_enum64_value(&e[i]), name))
					found++;
			}
		}
	}
	if (!found)
		return -ENOENT;
	t->source = RET_PF_FROM_BTF;
	return name_error(t);
}

bool ret_pf_format_lacks_enum_fix(const char *format_text)
{
	return strstr(format_text, "RET_PF_SPURIOUS") || strstr(format_text, "RET_PF_FIXED");
}

int ret_pf_from_format(struct ret_pf_table *t, const char *format_text)
{
	const char *fmt = strstr(format_text, "print fmt:");
	const char *spurious, *fixed;
	char *end;
	long sv, fv;

	memset(t, 0, sizeof(*t));
	if (!fmt || ret_pf_format_lacks_enum_fix(fmt))
		return -ENOENT;
	/* "... spurious %d fixed %d", ..., REC->ret == S, REC->ret == F */
	spurious = strstr(fmt, "REC->ret == ");
	if (!spurious)
		return -ENOENT;
	fixed = strstr(spurious + 1, "REC->ret == ");
	if (!fixed)
		return -ENOENT;
	sv = strtol(spurious + 12, &end, 10);
	if (end == spurious + 12)
		return -ENOENT;
	fv = strtol(fixed + 12, &end, 10);
	if (end == fixed + 12 || sv == fv)
		return -ENOENT;
	/*
	 * INVALID comes right before FIXED in every layout since FIXED exists
	 * (5.10): fast_page_fault() returns it for "take the slow path". The
	 * others moved between kernels and stay unknown.
	 */
	if (fv < 1 || set_name(t, sv, "RET_PF_SPURIOUS") || set_name(t, fv, "RET_PF_FIXED") ||
	    set_name(t, fv - 1, "RET_PF_INVALID")) {
		ret_pf_free(t);
		return -ERANGE;
	}
	t->source = RET_PF_FROM_TRACEFS;
	return name_error(t);
}
