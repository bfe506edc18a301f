// SPDX-License-Identifier: GPL-2.0
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

/* Each command defines its own name; these weak defaults serve the tests. */
__attribute__((weak)) const char *log_prog = "kvmmmu";
__attribute__((weak)) bool log_verbose;

/* Set by a command whose own report already explains every BPF failure it can meet. */
bool log_libbpf_quiet;

static char failed_prog[64];

bool log_parse_failed_prog(const char *line, char *name, size_t len)
{
	static const char before[] = "prog '", after[] = "': failed to load";
	const char *p = strstr(line, before), *end;

	if (!p)
		return false;
	p += sizeof(before) - 1;
	end = strstr(p, after);
	if (!end || end == p || (size_t)(end - p) >= len || memchr(p, '\'', (size_t)(end - p)))
		return false;
	memcpy(name, p, (size_t)(end - p));
	name[end - p] = '\0';
	return true;
}

int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char line[512];
	va_list copy;

	va_copy(copy, args);
	vsnprintf(line, sizeof(line), fmt, copy);
	va_end(copy);
	if (level == LIBBPF_WARN)
		log_parse_failed_prog(line, failed_prog, sizeof(failed_prog));
	/* the whole message, not LINE: a verifier log runs to many KiB */
	if (log_verbose || (level == LIBBPF_WARN && !log_libbpf_quiet))
		return vfprintf(stderr, fmt, args);
	return 0;
}

const char *log_libbpf_failed_prog(void)
{
	return failed_prog;
}

void log_libbpf_forget(void)
{
	failed_prog[0] = '\0';
}
