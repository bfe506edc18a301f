// SPDX-License-Identifier: GPL-2.0
#include <bpf/libbpf.h>
#include <stdarg.h>

#include "log.h"

/* Each command defines its own name; these weak defaults serve the tests. */
__attribute__((weak)) const char *log_prog = "kvmmmu";
__attribute__((weak)) bool log_verbose;

/* Set by a command whose own report already explains every BPF failure it can meet. */
bool log_libbpf_quiet;

int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (log_verbose || (level == LIBBPF_WARN && !log_libbpf_quiet))
		return vfprintf(stderr, fmt, args);
	return 0;
}
