// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* A decimal number at the start of S (no sign, no space), leaving *END after it. */
static int parse_leading_u64(const char *s, unsigned long long *v, char **end)
{
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, end, 10);
	return errno ? -ERANGE : 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	unsigned int shift = 0;
	const char *unit;
	char *end;
	int err = parse_leading_u64(s, &v, &end);

	if (err)
		return err;
	/* NUMBER [K|M|G|T [i]] [B] */
	unit = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
	if (unit) {
		shift = 10 * (unsigned int)(unit - units + 1);
		end++;
		if (*end == 'i')
			end++;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*bytes = (uint64_t)v << shift;
	return 0;
}

int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int err = parse_leading_u64(s, &v, &end);

	if (err)
		return err;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/*
 * As --sample's integers are digits alone: no sign, no exponent, no hex.
 * strtod() takes "0x10" and "1e3", which no other option does, and a user
 * who typed them likely meant something else.
 */
int parse_decimal(const char *s, double min, double max, double *out)
{
	size_t digits, frac = 0;
	char *end;
	double v;

	if (!s)
		return -EINVAL;
	digits = strspn(s, "0123456789");
	if (s[digits] == '.')
		frac = strspn(s + digits + 1, "0123456789");
	if (!digits && !frac)
		return -EINVAL;
	if (s[digits + (s[digits] == '.' ? 1 + frac : 0)])
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	/* a decimal too long to be a double is out of range, not garbage */
	if (errno || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_seconds(const char *s, double *secs)
{
	return parse_decimal(s, PARSE_SECONDS_MIN, PARSE_SECONDS_MAX, secs);
}

int parse_millis_ns(const char *s, uint64_t *ns)
{
	double ms;
	int err = parse_decimal(s, PARSE_MILLIS_MIN, PARSE_MILLIS_MAX, &ms);

	if (!err)
		*ns = (uint64_t)(ms * 1e6 + 0.5);
	return err;
}

int parse_region_shift(const char *s, unsigned int *shift)
{
	uint64_t bytes;

	if (parse_size(s, &bytes) || bytes < 4096 || bytes > (1ULL << 40) || (bytes & (bytes - 1)))
		return -EINVAL;
	*shift = (unsigned int)__builtin_ctzll(bytes);
	return 0;
}
