// SPDX-License-Identifier: GPL-2.0
/*
 * Latency histograms as text: folded into power-of-two rows (kvmmmu-hist's
 * reports, like bcc's), or as their own log-linear buckets (kvmmmu-top's
 * vCPU view), each with its percentiles.
 */
#include <stdio.h>

#include "render.h"

/* A value in the report's unit, plain: whole nanoseconds, else one decimal. */
static const char *plain(char buf[32], double v, const struct render_opts *o)
{
	snprintf(buf, 32, o->unit_ns == 1 ? "%.0f" : "%.1f", v);
	return buf;
}

static unsigned int display_row(__u64 value, double unit_ns)
{
	__u64 v = (__u64)((double)value / unit_ns);

	return v < 2 ? 0 : kvmmmu_log2(v);
}

/* "p50 ... p99.9 ... max ... avg ... UNIT" under a histogram. */
static void percentiles(FILE *f, const struct kvmmmu_hist *h, const struct render_opts *o)
{
	static const struct {
		const char *name;
		double p;
	} pcts[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}};
	char num[32];

	fprintf(f, "    ");
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		fprintf(f, "%s %s  ", pcts[i].name,
			plain(num, (double)hist_percentile(h, pcts[i].p) / o->unit_ns, o));
	fprintf(f, "max %s  ", plain(num, (double)h->max_ns / o->unit_ns, o));
	fprintf(f, "avg %s %s\n", plain(num, (double)h->sum_ns / (double)h->count / o->unit_ns, o),
		o->unit);
}

void render_hist(FILE *f, const struct kvmmmu_hist *h, const char *title,
		 const struct render_opts *o)
{
	__u64 rows[65] = {}, max_count = 0;
	int first = -1, last = -1;

	for (__u32 b = 0; b < KVMMMU_HIST_BUCKETS; b++) {
		unsigned int r;

		if (!h->slots[b])
			continue;
		r = display_row(kvmmmu_hist_slot_low(b), o->unit_ns);
		rows[r] += h->slots[b];
	}
	for (int r = 0; r < 65; r++) {
		if (!rows[r])
			continue;
		if (first < 0)
			first = r;
		last = r;
		if (rows[r] > max_count)
			max_count = rows[r];
	}
	fprintf(f, "\n    %s: %llu samples\n", title, (unsigned long long)h->count);
	if (first < 0)
		return;
	fprintf(f, "    %24s : count     distribution\n", o->unit);
	for (int r = first; r <= last; r++) {
		unsigned long long lo = r ? 1ULL << r : 0, hi = (2ULL << r) - 1;
		int stars = (int)(rows[r] * 40 / max_count);

		fprintf(f, "    %10llu -> %-10llu : %-9llu |%-40.*s|\n", lo, hi,
			(unsigned long long)rows[r], stars,
			"****************************************");
	}
	percentiles(f, h, o);
}

/*
 * The same histogram as its own log-linear buckets (4 to a power of two),
 * the non-empty ones, "~" where empty ones lie between: finer than the
 * power-of-two rows, and short enough for a screen; the percentiles first.
 */
void render_hist_buckets(FILE *f, const struct kvmmmu_hist *h, const char *title,
			 const struct render_opts *o)
{
	__u64 max_count = 0;
	char lo[32], hi[32];
	int prev = -1;

	for (__u32 b = 0; b < KVMMMU_HIST_BUCKETS; b++)
		if (h->slots[b] > max_count)
			max_count = h->slots[b];
	fprintf(f, "\n    %s: %llu samples\n", title, (unsigned long long)h->count);
	if (!max_count)
		return;
	percentiles(f, h, o); /* first: a screen may have no room left at the end */
	fprintf(f, "    %24s : count     distribution\n", o->unit);
	for (__u32 b = 0; b < KVMMMU_HIST_BUCKETS; b++) {
		int stars = (int)(h->slots[b] * 40 / max_count);

		if (!h->slots[b])
			continue;
		if (prev >= 0 && (__u32)prev + 1 < b)
			fprintf(f, "    %24s :\n", "~");
		fprintf(f, "    %10s -> %-10s : %-9llu |%-40.*s|\n",
			plain(lo, (double)kvmmmu_hist_slot_low(b) / o->unit_ns, o),
			b + 1 < KVMMMU_HIST_BUCKETS
				? plain(hi, (double)(kvmmmu_hist_slot_high(b) + 1) / o->unit_ns, o)
				: "",
			(unsigned long long)h->slots[b], stars,
			"****************************************");
		prev = (int)b;
	}
}
