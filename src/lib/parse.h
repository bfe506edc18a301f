/* SPDX-License-Identifier: GPL-2.0 */
/* Strict parsers for command-line values: whole string, no silent wrap. */
#ifndef KVMMMU_PARSE_H
#define KVMMMU_PARSE_H

#include <stdint.h>

/* "64M", "1G", "4096", "2k": binary multiples, case-insensitive, optional "iB"/"B". */
int parse_size(const char *s, uint64_t *bytes);
/* Decimal integer within [min, max]. */
int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Seconds as a positive decimal number ("2", "0.5"). */
int parse_seconds(const char *s, double *secs);

#endif
