// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "parse.h"
#include "session_args.h"

void session_add_specs(struct proc_spec *specs, int *n, int max, const char *arg)
{
	char one[256], why[160];
	size_t len;

	if (!*arg)
		cli_usage_error("-p '': an empty name would match every process");
	for (const char *p = arg;; p += len + 1) {
		len = strcspn(p, ",");
		if (!len)
			cli_usage_error(
				"-p '%s': an empty name in the list would match every process",
				arg);
		if (*n == max)
			cli_usage_error("too many -p processes (at most %d)", max);
		snprintf(one, sizeof(one), "%.*s", (int)len, p);
		if (len >= sizeof(one))
			cli_usage_error(
				"-p '%.*s...': a name pattern of %zu characters (at most %zu)", 40,
				p, len, sizeof(one) - 1);
		if (proc_spec_init(&specs[*n], one)) {
			proc_spec_why(one, why, sizeof(why));
			proc_spec_free(&specs[*n]);
			cli_usage_error("-p '%s': %s", one, why);
		}
		(*n)++;
		if (!p[len])
			break;
	}
}

bool session_args_parse(struct session_args *a, int key, const char *arg)
{
	uint64_t v;

	switch (key) {
	case 'p':
		session_add_specs(a->specs, &a->n_specs, SESSION_MAX_SPECS, arg);
		return true;
	case SESSION_OPT_PROBE_MODE:
		if (probe_mode_parse(arg, &a->mode))
			cli_usage_error(
				"--probe-mode '%s': expected auto, fsession, fentry, kprobe or "
				"tracepoint",
				arg);
		return true;
	case SESSION_OPT_SAMPLE:
		if (parse_u64_range(arg, 1, 1 << 20, &v))
			cli_usage_error("--sample '%s': expected a number from 1 to %d", arg,
					1 << 20);
		a->sample_every = (unsigned int)v;
		return true;
	default:
		return false;
	}
}

void session_args_free(struct session_args *a)
{
	for (int i = 0; i < a->n_specs; i++)
		proc_spec_free(&a->specs[i]);
	a->n_specs = 0;
}
