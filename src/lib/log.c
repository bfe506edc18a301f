// SPDX-License-Identifier: GPL-2.0
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Each command defines its own name; these weak defaults serve the tests. */
__attribute__((weak)) const char *log_prog = "kvmmmu";
__attribute__((weak)) bool log_verbose;

/*
 * libbpf's warnings since log_libbpf_forget(), without -v: the end of them
 * (a verifier log is most of it, and its last lines say what it refused).
 */
static char kept[32768];
static size_t n_kept;

static void keep(const char *s, size_t n)
{
	const char *nl;

	if (n > sizeof(kept) / 2) {
		/* a verifier log longer than that: its first line (which program) and its end */
		nl = memchr(s, '\n', 256);
		if (nl)
			keep(s, (size_t)(nl + 1 - s));
		nl = memchr(s + n - sizeof(kept) / 2, '\n', sizeof(kept) / 2);
		if (nl)
			keep(nl + 1, (size_t)(s + n - nl - 1));
		return;
	}
	if (n_kept + n >= sizeof(kept)) {
		/* drop the oldest lines, whole ones */
		size_t drop = n_kept + n - (sizeof(kept) - 1);

		nl = drop < n_kept ? memchr(kept + drop, '\n', n_kept - drop) : NULL;
		drop = nl ? (size_t)(nl + 1 - kept) : n_kept;
		memmove(kept, kept + drop, n_kept - drop);
		n_kept -= drop;
	}
	memcpy(kept + n_kept, s, n);
	n_kept += n;
	kept[n_kept] = '\0';
}

int log_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char line[512], *all;
	va_list copy;
	int n;

	if (level != LIBBPF_WARN)
		return log_verbose ? vfprintf(stderr, fmt, args) : 0;
	va_copy(copy, args);
	n = vsnprintf(line, sizeof(line), fmt, copy);
	va_end(copy);
	/* the whole message, not LINE: a verifier log runs to many KiB */
	if (log_verbose)
		return vfprintf(stderr, fmt, args);
	if (n < (int)sizeof(line)) {
		keep(line, n > 0 ? (size_t)n : 0);
		return 0;
	}
	all = malloc((size_t)n + 1);
	if (!all) {
		keep(line, sizeof(line) - 1);
		return 0;
	}
	vsnprintf(all, (size_t)n + 1, fmt, args);
	keep(all, (size_t)n);
	free(all);
	return 0;
}

/* Verifier log lines that say how much it did, not what it refused. */
static bool tally_line(const char *l, size_t n)
{
	static const char *const skip[] = {"processed ", "verification time", "stack depth",
					   "libbpf: failed to load object",
					   "libbpf: failed to load BPF skeleton"};

	if (!n)
		return true;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (n >= strlen(skip[i]) && !strncmp(l, skip[i], strlen(skip[i])))
			return true;
	return false;
}

static void append(char *out, size_t len, size_t *used, const char *s, size_t n)
{
	if (*used + n >= len)
		n = *used + 1 < len ? len - *used - 1 : 0;
	memcpy(out + *used, s, n);
	*used += n;
	out[*used] = '\0';
}

void log_excerpt(const char *log, int max, char *out, size_t len)
{
	static const char begin[] = "-- BEGIN PROG LOAD LOG --\n",
			  end[] = "-- END PROG LOAD LOG --",
			  head[] = "the verifier's last words:\n";
	const char *from = NULL, *to = log + strlen(log), *p, *b, *l[16];
	const char *indent = "  ";
	size_t used = 0, nl[16];
	int n = 0;

	if (!len)
		return;
	out[0] = '\0';
	if (max > 16)
		max = 16;
	/* the last program's verifier log, if libbpf printed one */
	for (p = log; (p = strstr(p, begin)); p++)
		from = p;
	if (from) {
		b = from;
		while (b > log && b[-1] != '\n')
			b--;
		append(out, len, &used, "  ", 2);
		append(out, len, &used, b, (size_t)(from - b)); /* "libbpf: prog 'NAME': " */
		append(out, len, &used, head, strlen(head));
		indent = "    ";
		from += strlen(begin);
		p = strstr(from, end);
		if (p)
			to = p;
	} else {
		from = log;
		p = strstr(log, end);
		if (p)
			to = p; /* its beginning dropped: the end is what matters */
	}
	/* the last MAX lines worth showing, collected backwards */
	for (p = to; p > from && n < max;) {
		const char *e = p[-1] == '\n' ? p - 1 : p;

		for (b = e; b > from && b[-1] != '\n'; b--)
			;
		if (!tally_line(b, (size_t)(e - b))) {
			l[n] = b;
			nl[n++] = (size_t)(e - b);
		}
		p = b;
	}
	while (n-- > 0) {
		append(out, len, &used, indent, strlen(indent));
		append(out, len, &used, l[n], nl[n]);
		append(out, len, &used, "\n", 1);
	}
}

void log_libbpf_excerpt(void)
{
	static char out[4096];

	if (log_verbose || !n_kept)
		return;
	log_excerpt(kept, 8, out, sizeof(out));
	fprintf(stderr, "%s  (-v shows all of libbpf's messages)\n", out);
}

void log_libbpf_forget(void)
{
	n_kept = 0;
	kept[0] = '\0';
}
