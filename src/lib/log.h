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
 * libbpf's messages: all of them with -v. Otherwise its warnings are kept,
 * not printed: a program that fails to load is usually loaded another way
 * (tp_btf as raw_tp, fentry as kprobes), and its verifier log (150 lines on
 * 6.12) must not land in kvmmmu-top's screen or after a one-line error.
 * log_libbpf_excerpt() shows them when nothing could be loaded. For
 * libbpf_set_print().
 */
enum libbpf_print_level;
int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list args);
/*
 * After an error that nothing recovers from: the end of the verifier log (or
 * libbpf's last warnings) kept since log_libbpf_forget(), indented, and where
 * the rest is; nothing with -v, which printed it already.
 */
void log_libbpf_excerpt(void);
/*
 * The lines log_libbpf_excerpt() shows of the kept warnings LOG: at most MAX,
 * into OUT, each "  LINE\n". Pure.
 */
void log_excerpt(const char *log, int max, char *out, size_t len);
/* Drops the warnings kept: call it before each load attempt. */
void log_libbpf_forget(void);

#endif
