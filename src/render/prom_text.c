// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "prom_text.h"

/* The powers of two the histogram buckets end at: 2^FIRST - 1 ns .. 2^LAST - 1 ns. */
#define PROM_HIST_FIRST_LOG2 10
#define PROM_HIST_LAST_LOG2 35

static const char *const type_names[] = {
	[PROM_COUNTER] = "counter",
	[PROM_GAUGE] = "gauge",
	[PROM_HISTOGRAM] = "histogram",
};

static void fail(struct prom_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

/* What is buffered, to F. A failed write shows in ferror(), which prom_finish() checks. */
static void flush(struct prom_writer *w)
{
	if (w->f && w->len)
		fwrite(w->out, 1, w->len, w->f);
	if (w->f)
		w->len = 0;
}

/* Whether N more bytes (and a NUL, in memory) fit now: F's buffer flushed, or memory grown. */
static bool make_room(struct prom_writer *w, size_t n)
{
	size_t cap = w->cap ? w->cap : 65536;
	char *out;

	if (w->f) {
		flush(w);
		return n <= w->cap;
	}
	if (w->err == -ENOMEM)
		return false;
	while (cap - w->len <= n)
		cap *= 2;
	out = realloc(w->out, cap);
	if (!out) {
		fail(w, -ENOMEM);
		return false;
	}
	w->out = out;
	w->cap = cap;
	return true;
}

static void put(struct prom_writer *w, const char *s, size_t n)
{
	if (n >= w->cap - w->len && !make_room(w, n)) {
		if (w->f) /* larger than the buffer: past it */
			fwrite(s, 1, n, w->f);
		return;
	}
	memcpy(w->out + w->len, s, n);
	w->len += n;
}

static void put_str(struct prom_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

static void put_char(struct prom_writer *w, char c)
{
	if (w->len + 1 >= w->cap && !make_room(w, 1))
		return;
	w->out[w->len++] = c;
}

/* " VALUE\n", as "%llu" would write it: a scrape is mostly these. */
static void put_u64_line(struct prom_writer *w, uint64_t v)
{
	char s[24];
	char *p = s + sizeof(s);

	*--p = '\n';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
	*--p = ' ';
	put(w, p, (size_t)(s + sizeof(s) - p));
}

/* The characters of metric (and, without ':', label) names: [a-zA-Z0-9_:]. */
static bool name_char(char c, int label)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || (c == ':' && !label);
}

int prom_valid_name(const char *name, int label)
{
	if (!name || !*name || (*name >= '0' && *name <= '9'))
		return 0;
	/* "__" starts the names Prometheus keeps for itself */
	if (label && name[0] == '_' && name[1] == '_')
		return 0;
	for (const char *p = name; *p; p++)
		if (!name_char(*p, label))
			return 0;
	return 1;
}

void prom_init(struct prom_writer *w, FILE *f)
{
	/* not the whole of it: buf is written before it is read */
	memset(w, 0, offsetof(struct prom_writer, buf));
	w->f = f;
	w->out = w->buf;
	w->cap = sizeof(w->buf);
}

void prom_init_mem(struct prom_writer *w, char *buf, size_t cap)
{
	memset(w, 0, offsetof(struct prom_writer, buf));
	w->out = buf;
	w->cap = buf ? cap : 0;
}

int prom_finish(struct prom_writer *w)
{
	flush(w);
	for (size_t i = 0; i < w->n_declared; i++)
		free(w->declared[i]);
	w->n_declared = 0;
	w->family = NULL;
	free(w->labels);
	w->labels = NULL;
	w->labels_cap = w->labels_len = 0;
	if (!w->f) { /* in memory: nobody took the text */
		free(w->out);
		w->out = NULL;
		w->cap = w->len = 0;
	} else if (!w->err && (fflush(w->f) || ferror(w->f))) {
		w->err = -EIO;
	}
	return w->err;
}

int prom_finish_mem(struct prom_writer *w, char **text, size_t *len, size_t *cap)
{
	*text = NULL;
	*len = *cap = 0;
	if (!w->err && (w->len < w->cap || make_room(w, 0))) {
		w->out[w->len] = '\0';
		*text = w->out;
		*len = w->len;
		*cap = w->cap;
		w->out = NULL; /* the caller's now */
	}
	return prom_finish(w);
}

/*
 * TEXT escaped for a HELP line (backslash, newline) or a label value (also
 * '"'), by runs: most text has nothing to escape. OUT gets it by TO.
 */
static void escape(const char *text, int quotes, void (*to)(void *out, const char *s, size_t n),
		   void *out)
{
	const char *p = text ? text : "";

	for (;;) {
		size_t run = strcspn(p, quotes ? "\\\n\"" : "\\\n");

		if (run)
			to(out, p, run);
		p += run;
		if (!*p)
			return;
		to(out, *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : "\\\"", 2);
		p++;
	}
}

static void put_out(void *w, const char *s, size_t n)
{
	put(w, s, n);
}

/* Appends S to the writer's labels text; on -ENOMEM, fails the writer. */
static void labels_put(void *out, const char *s, size_t n)
{
	struct prom_writer *w = out;

	if (w->labels_len + n > w->labels_cap) {
		size_t cap = w->labels_cap ? 2 * w->labels_cap : 256;
		char *l;

		while (cap < w->labels_len + n)
			cap *= 2;
		l = realloc(w->labels, cap);
		if (!l) {
			fail(w, -ENOMEM);
			return;
		}
		w->labels = l;
		w->labels_cap = cap;
	}
	memcpy(w->labels + w->labels_len, s, n);
	w->labels_len += n;
}

/* The name's slot in the declared names' table: its own, or the free one it would take. */
static size_t family_slot(const struct prom_writer *w, const char *name)
{
	size_t i = hash_str(HASH_INIT, name) % PROM_FAMILY_SLOTS;

	while (w->slots[i] && strcmp(w->declared[w->slots[i] - 1], name))
		i = (i + 1) % PROM_FAMILY_SLOTS;
	return i;
}

void prom_family(struct prom_writer *w, const char *name, enum prom_type type, const char *help)
{
	size_t slot;

	if (w->err)
		return;
	if (!prom_valid_name(name, 0) || type > PROM_HISTOGRAM) {
		fail(w, -EINVAL);
		return;
	}
	slot = family_slot(w, name);
	if (w->slots[slot]) {
		fail(w, -EEXIST); /* its lines would no longer be together */
		return;
	}
	if (w->n_declared == PROM_MAX_FAMILIES) {
		fail(w, -E2BIG);
		return;
	}
	w->declared[w->n_declared] = strdup(name);
	if (!w->declared[w->n_declared]) {
		fail(w, -ENOMEM);
		return;
	}
	w->family = w->declared[w->n_declared++];
	w->slots[slot] = (uint16_t)w->n_declared;
	w->family_len = strlen(name);
	w->type = type;
	put_str(w, "# HELP ");
	put(w, name, w->family_len);
	put_char(w, ' ');
	escape(help, 0, put_out, w);
	put_str(w, "\n# TYPE ");
	put(w, name, w->family_len);
	put_char(w, ' ');
	put_str(w, type_names[type]);
	put_char(w, '\n');
}

/*
 * The labels of the samples to come, checked and escaped once for all of
 * them (a histogram's 29 lines): 0, or the rule broken. LE: they will be
 * followed by "le".
 */
static int set_labels(struct prom_writer *w, const struct prom_label *labels, size_t n, bool le)
{
	w->labels_len = 0;
	for (size_t i = 0; i < n; i++) {
		if (!prom_valid_name(labels[i].name, 1) || (le && !strcmp(labels[i].name, "le")))
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(labels[i].name, labels[j].name))
				return -EINVAL;
	}
	for (size_t i = 0; i < n && !w->err; i++) {
		if (i)
			labels_put(w, ",", 1);
		labels_put(w, labels[i].name, strlen(labels[i].name));
		labels_put(w, "=\"", 2);
		escape(labels[i].value, 1, labels_put, w);
		labels_put(w, "\"", 1);
	}
	return w->err;
}

/* NAME{labels[,le="LE"]}, the start of a sample line, with the labels set_labels() made. */
static void put_series(struct prom_writer *w, const char *suffix, const char *le)
{
	put(w, w->family, w->family_len);
	put_str(w, suffix);
	if (!w->labels_len && !le)
		return;
	put_char(w, '{');
	put(w, w->labels, w->labels_len);
	if (le) {
		put_str(w, w->labels_len ? ",le=\"" : "le=\"");
		put_str(w, le);
		put_char(w, '"');
	}
	put_char(w, '}');
}

/* Whether a sample of TYPE may be written now. */
static int may_write(struct prom_writer *w, enum prom_type type)
{
	if (w->err)
		return 0;
	if (!w->family || w->type != type) {
		fail(w, -EINVAL);
		return 0;
	}
	return 1;
}

static void put_double(struct prom_writer *w, double v)
{
	char s[32];

	if (isnan(v)) {
		put_str(w, "NaN");
	} else if (isinf(v)) {
		put_str(w, v > 0 ? "+Inf" : "-Inf");
	} else {
		int n = snprintf(s, sizeof(s), "%.17g", v);

		put(w, s, n > 0 && (size_t)n < sizeof(s) ? (size_t)n : 0);
	}
}

void prom_u64(struct prom_writer *w, const struct prom_label *labels, size_t n_labels,
	      uint64_t value)
{
	int err;

	if (!may_write(w, w->type == PROM_GAUGE ? PROM_GAUGE : PROM_COUNTER))
		return;
	err = set_labels(w, labels, n_labels, false);
	if (err) {
		fail(w, err);
		return;
	}
	put_series(w, "", NULL);
	put_u64_line(w, value);
}

void prom_double(struct prom_writer *w, const struct prom_label *labels, size_t n_labels,
		 double value)
{
	int err;

	if (!may_write(w, w->type == PROM_GAUGE ? PROM_GAUGE : PROM_COUNTER))
		return;
	/* a counter neither goes down nor is unknown */
	if (w->type == PROM_COUNTER && !(value >= 0)) {
		fail(w, -EINVAL);
		return;
	}
	err = set_labels(w, labels, n_labels, false);
	if (err) {
		fail(w, err);
		return;
	}
	put_series(w, "", NULL);
	put_char(w, ' ');
	put_double(w, value);
	put_char(w, '\n');
}

/* The "le" of each bucket bound, as "%.17g" of its seconds: the same for every histogram. */
static char le_text[PROM_HIST_LAST_LOG2 + 1][32];
static pthread_once_t le_once = PTHREAD_ONCE_INIT;

static void le_init(void)
{
	for (int e = PROM_HIST_FIRST_LOG2; e <= PROM_HIST_LAST_LOG2; e++)
		snprintf(le_text[e], sizeof(le_text[e]), "%.17g", (double)((1ULL << e) - 1) / 1e9);
}

void prom_histogram(struct prom_writer *w, const struct prom_label *labels, size_t n_labels,
		    const struct kvmmmu_hist *h)
{
	uint64_t below = 0, total = 0;
	uint32_t slot = 0;
	int err;

	if (!may_write(w, PROM_HISTOGRAM))
		return;
	err = set_labels(w, labels, n_labels, true);
	if (err) {
		fail(w, err);
		return;
	}
	pthread_once(&le_once, le_init);
	for (uint32_t i = 0; i < KVMMMU_HIST_BUCKETS; i++)
		total += h->slots[i];
	for (int e = PROM_HIST_FIRST_LOG2; e <= PROM_HIST_LAST_LOG2; e++) {
		uint64_t bound = (1ULL << e) - 1;

		/* a power of two starts a bucket, so 2^e - 1 ends one: nothing straddles it */
		while (slot < KVMMMU_HIST_BUCKETS && kvmmmu_hist_slot_high(slot) <= bound)
			below += h->slots[slot++];
		put_series(w, "_bucket", le_text[e]);
		put_u64_line(w, below);
	}
	put_series(w, "_bucket", "+Inf");
	put_u64_line(w, total);
	put_series(w, "_sum", NULL);
	put_char(w, ' ');
	put_double(w, (double)h->sum_ns / 1e9);
	put_char(w, '\n');
	put_series(w, "_count", NULL);
	put_u64_line(w, total);
}
