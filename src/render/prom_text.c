// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

int prom_valid_name(const char *name, int label)
{
	if (!name || !*name || (*name >= '0' && *name <= '9'))
		return 0;
	/* "__" starts the names Prometheus keeps for itself */
	if (label && name[0] == '_' && name[1] == '_')
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || (*p == ':' && !label)))
			return 0;
	return 1;
}

void prom_init(struct prom_writer *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

int prom_finish(struct prom_writer *w)
{
	for (size_t i = 0; i < w->n_declared; i++)
		free(w->declared[i]);
	w->n_declared = 0;
	w->family = NULL;
	if (!w->err && (fflush(w->f) || ferror(w->f)))
		w->err = -EIO;
	return w->err;
}

/* TEXT escaped for a HELP line (backslash, newline) or a label value (also '"'). */
static void put_escaped(FILE *f, const char *text, int quotes)
{
	for (const char *p = text ? text : ""; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '"' && quotes)
			fputs("\\\"", f);
		else
			fputc(*p, f);
	}
}

void prom_family(struct prom_writer *w, const char *name, enum prom_type type, const char *help)
{
	if (w->err)
		return;
	if (!prom_valid_name(name, 0) || type > PROM_HISTOGRAM) {
		fail(w, -EINVAL);
		return;
	}
	for (size_t i = 0; i < w->n_declared; i++)
		if (!strcmp(w->declared[i], name)) {
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
	w->type = type;
	fprintf(w->f, "# HELP %s ", name);
	put_escaped(w->f, help, 0);
	fprintf(w->f, "\n# TYPE %s %s\n", name, type_names[type]);
}

/* NAME{labels[,le="LE"]}, the start of a sample line; 0, or the rule broken. */
static int put_series(struct prom_writer *w, const char *suffix, const struct prom_label *labels,
		      size_t n, const char *le)
{
	for (size_t i = 0; i < n; i++) {
		if (!prom_valid_name(labels[i].name, 1) || (le && !strcmp(labels[i].name, "le")))
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(labels[i].name, labels[j].name))
				return -EINVAL;
	}
	fprintf(w->f, "%s%s", w->family, suffix);
	if (!n && !le)
		return 0;
	fputc('{', w->f);
	for (size_t i = 0; i < n; i++) {
		fprintf(w->f, "%s%s=\"", i ? "," : "", labels[i].name);
		put_escaped(w->f, labels[i].value, 1);
		fputc('"', w->f);
	}
	if (le)
		fprintf(w->f, "%sle=\"%s\"", n ? "," : "", le);
	fputc('}', w->f);
	return 0;
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

static void put_double(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.17g", v);
}

void prom_u64(struct prom_writer *w, const struct prom_label *labels, size_t n_labels,
	      uint64_t value)
{
	int err;

	if (!may_write(w, w->type == PROM_GAUGE ? PROM_GAUGE : PROM_COUNTER))
		return;
	err = put_series(w, "", labels, n_labels, NULL);
	if (err) {
		fail(w, err);
		return;
	}
	fprintf(w->f, " %llu\n", (unsigned long long)value);
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
	err = put_series(w, "", labels, n_labels, NULL);
	if (err) {
		fail(w, err);
		return;
	}
	fputc(' ', w->f);
	put_double(w->f, value);
	fputc('\n', w->f);
}

void prom_histogram(struct prom_writer *w, const struct prom_label *labels, size_t n_labels,
		    const struct kvmmmu_hist *h)
{
	uint64_t below = 0, total = 0;
	uint32_t slot = 0;
	char le[32];
	int err = 0;

	if (!may_write(w, PROM_HISTOGRAM))
		return;
	for (uint32_t i = 0; i < KVMMMU_HIST_BUCKETS; i++)
		total += h->slots[i];
	for (int e = PROM_HIST_FIRST_LOG2; e <= PROM_HIST_LAST_LOG2 && !err; e++) {
		uint64_t bound = (1ULL << e) - 1;

		/* a power of two starts a bucket, so 2^e - 1 ends one: nothing straddles it */
		while (slot < KVMMMU_HIST_BUCKETS && kvmmmu_hist_slot_high(slot) <= bound)
			below += h->slots[slot++];
		snprintf(le, sizeof(le), "%.17g", (double)bound / 1e9);
		err = put_series(w, "_bucket", labels, n_labels, le);
		if (!err)
			fprintf(w->f, " %llu\n", (unsigned long long)below);
	}
	if (!err)
		err = put_series(w, "_bucket", labels, n_labels, "+Inf");
	if (!err) {
		fprintf(w->f, " %llu\n", (unsigned long long)total);
		err = put_series(w, "_sum", labels, n_labels, NULL);
	}
	if (!err) {
		fputc(' ', w->f);
		put_double(w->f, (double)h->sum_ns / 1e9);
		fputc('\n', w->f);
		err = put_series(w, "_count", labels, n_labels, NULL);
	}
	if (!err)
		fprintf(w->f, " %llu\n", (unsigned long long)total);
	if (err)
		fail(w, err);
}
