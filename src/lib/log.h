/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_LOG_H
#define KVMMMU_LOG_H

#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>

/* Each command defines these in its main file (weak defaults in log.c). */
extern const char *log_prog; /* prefixed to every error */
extern bool log_verbose;

/* One line on stderr, "prog: message". */
#define elog(fmt, ...) fprintf(stderr, "%s: " fmt "\n", log_prog, ##__VA_ARGS__)
#define vlog(fmt, ...)                                                                             \
	do {                                                                                       \
		if (log_verbose)                                                                   \
			fprintf(stderr, fmt "\n", ##__VA_ARGS__);                                  \
	} while (0)

/*
 * libbpf's messages: warnings (a verifier's refusal, a failed attach) always,
 * unless LOG_LIBBPF_QUIET; info and debug with -v. For libbpf_set_print().
 */
enum libbpf_print_level;
extern bool log_libbpf_quiet;
int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list args);
/*
 * The program libbpf last said it failed to load ("prog 'NAME': failed to
 * load"), "" if none since log_libbpf_forget(): which one to load another way.
 */
const char *log_libbpf_failed_prog(void);
void log_libbpf_forget(void);
/* NAME from a libbpf message LINE of that kind; false for any other line. Pure. */
bool log_parse_failed_prog(const char *line, char *name, size_t len);

#endif
