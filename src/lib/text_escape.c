// SPDX-License-Identifier: GPL-2.0
#include <langinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text_escape.h"

bool text_locale_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);

	return cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "UTF8"));
}

/*
 * The length of the UTF-8 sequence at P (1 to 4) and its code point in
 * *CP, or 0 where it is none: a stray or overlong byte, a surrogate, past
 * U+10FFFF, or cut short.
 */
static int utf8_seq(const unsigned char *p, uint32_t *cp)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, *cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, *cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, *cp = p[0] & 0x07;
	else
		return 0;
	/* the second byte's range rules out overlongs, surrogates and past U+10FFFF */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	for (int i = 1; i < n; i++) {
		if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf))
			return 0; /* a NUL ends it here too */
		*cp = *cp << 6 | (p[i] & 0x3f);
	}
	return n;
}

/* Characters that act rather than show: C1, and those that break or reorder a line. */
static bool acts(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
	       cp == 0x200f || cp == 0x061c;
}

/* How many bytes S's next character takes (*N of them) and whether it is shown as \xNN. */
static bool escaped(const unsigned char *s, bool utf8, int *n)
{
	uint32_t cp;

	*n = 1;
	if (*s < 0x80)
		return *s < 0x20 || *s == 0x7f;
	if (!utf8 || !(*n = utf8_seq(s, &cp))) {
		*n = 1;
		return true;
	}
	return acts(cp);
}

char *text_escape(const char *s, bool utf8)
{
	const unsigned char *p;
	size_t len = 0;
	char *out, *w;
	int n;

	for (p = (const void *)s; *p; p += n)
		len += escaped(p, utf8, &n) ? 4 * (size_t)n : *p == '\\' ? 2 : (size_t)n;
	out = malloc(len + 1);
	if (!out)
		return NULL;
	w = out;
	for (p = (const void *)s; *p; p += n) {
		if (escaped(p, utf8, &n)) {
			for (int i = 0; i < n; i++)
				w += sprintf(w, "\\x%02x", p[i]);
		} else if (*p == '\\') {
			*w++ = '\\';
			*w++ = '\\';
		} else {
			memcpy(w, p, (size_t)n);
			w += n;
		}
	}
	*w = '\0';
	return out;
}
