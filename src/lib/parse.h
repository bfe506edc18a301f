/* SPDX-License-Identifier: GPL-2.0 */
/* Strict parsers for command-line values: whole string, no silent wrap. */
#ifndef KVMMMU_PARSE_H
#define KVMMMU_PARSE_H

#include <stdint.h>

/* "64M", "1G", "4096", "2k": binary multiples, case-insensitive, optional "iB"/"B". */
int parse_size(const char *s, uint64_t *bytes);
/* --region SIZE: a power of two from 4K to 1T, as its log2 into *SHIFT; 0, or -EINVAL. */
int parse_region_shift(const char *s, unsigned int *shift);
/*
 * Numbers on every kvmmmu command line are decimal: digits, and for seconds
 * and milliseconds one '.' ("0.5", ".5"); no sign, exponent or hex ("0x10",
 * "1e3" are refused, as --sample has always refused them).
 */
/* Decimal integer within [min, max]. */
int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/*
 * A decimal number ("2", "0.5", ".5": digits, at most one '.') from MIN to
 * MAX; -EINVAL for other text, -ERANGE outside the range.
 */
int parse_decimal(const char *s, double min, double max, double *out);
/*
 * Seconds as a decimal number ("2", "0.5") from 1 ms to 366 days: shorter
 * is no window at all, longer a typo (and past what the timers keep exact).
 * -EINVAL for text that is not a decimal number, -ERANGE outside the range.
 */
int parse_seconds(const char *s, double *secs);
/*
 * Milliseconds as a decimal number ("10", "0.5"), as bcc's ext4slower takes
 * them, from 1 us to an hour, into nanoseconds; errors as parse_seconds().
 */
int parse_millis_ns(const char *s, uint64_t *ns);
#define PARSE_MILLIS_MIN 0.001
#define PARSE_MILLIS_MAX 3600000.0
#define PARSE_SECONDS_MIN 0.001
#define PARSE_SECONDS_MAX (366.0 * 86400)
/* What to tell a user whose value parse_seconds refused. */
#define PARSE_SECONDS_RANGE "seconds from 0.001 to 31622400 (366 days)"

#endif
