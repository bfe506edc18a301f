// SPDX-License-Identifier: GPL-2.0
#include "cli.h"
#include "parse.h"
#include "session_args.h"

bool session_args_parse(struct session_args *a, int key, const char *arg)
{
	uint64_t v;

	switch (key) {
	case 'p':
		if (a->n_specs == SESSION_MAX_SPECS)
			cli_usage_error("too many -p options (at most %d)", SESSION_MAX_SPECS);
		if (!*arg)
			cli_usage_error("-p '': an empty name would match every process");
		if (proc_spec_init(&a->specs[a->n_specs], arg))
			cli_usage_error("-p '%s': not a PID nor a valid name pattern", arg);
		a->n_specs++;
		return true;
	case SESSION_OPT_PROBE_MODE:
		if (probe_mode_parse(arg, &a->mode))
			cli_usage_error(
				"--probe-mode '%s': expected auto, fentry, kprobe or tracepoint",
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
