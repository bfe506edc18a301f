// SPDX-License-Identifier: GPL-2.0
/*
 * prombench: the CPU kvmmmu-exporter spends rendering a scrape, on a
 * synthetic fleet (tests/tools/promfleet.h: 8 VMs x 8 vCPUs by default,
 * per_vcpu on as a fleet scrape has it). Each scrape does what
 * exporter_scrape() does after session_snapshot(): prom_state_update(),
 * render_prom(), the process_* families, the text into the buffer the last
 * scrape sent. Apart from it, what else a scrape costs that needs no KVM:
 * gzip as the exporter does it (libdeflate at level 1, when the client asks,
 * as Prometheus does), beside zlib's level 1 (what it used before), and the
 * copy of KVM's statistics session_snapshot() makes. Reading BPF
 * maps is not here: it needs the BPF objects loaded.
 *
 *   prombench [-n SCRAPES] [--vms N] [--vcpus N] [--no-per-vcpu] [--odd-names]
 *             [--memstream | --null] [--scrape-only | --dump]
 *
 * --memstream writes each scrape into a new memstream, as the exporter did
 * before it kept its buffer; --null into /dev/null (the rendering alone);
 * --scrape-only measures the scrapes only (for perf record); --dump writes
 * one rendering (no process_* families: they change) to stdout.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include <libdeflate.h>

#include "exporter.h"
#include "promfleet.h"

const char *log_prog = "prombench";
bool log_verbose;

enum sink {
	SINK_KEPT,	/* the last scrape's buffer, as the exporter does */
	SINK_MEMSTREAM, /* a new memstream a scrape */
	SINK_NULL,	/* /dev/null */
};

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double percentile(double *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)n);

	qsort(v, n, sizeof(*v), cmp_double);
	return v[i < n ? i : n - 1];
}

/*
 * One scrape's text, as exporter_scrape() makes it, into SINK: *BODY (*CAP
 * bytes) the last scrape's text and then this one's (*LEN bytes); NUL for
 * SINK_NULL. 0 or -errno.
 */
static int scrape(const struct snapshot *snap, struct prom_state *st, const struct prom_opts *o,
		  bool process, enum sink sink, FILE *nul, char **body, size_t *len, size_t *cap)
{
	struct prom_writer w;
	FILE *f = NULL;
	int err;

	if (sink == SINK_MEMSTREAM) {
		free(*body);
		*body = NULL;
		f = open_memstream(body, len);
		if (!f)
			return -ENOMEM;
	}
	err = prom_state_update(st, snap);
	if (sink == SINK_KEPT) {
		prom_init_mem(&w, *body, *cap);
		*body = NULL;
	} else {
		prom_init(&w, f ? f : nul);
	}
	render_prom(&w, snap, st, o);
	if (process)
		process_metrics(&w);
	if (err)
		prom_finish(&w);
	else if (sink == SINK_KEPT)
		err = prom_finish_mem(&w, body, len, cap);
	else
		err = prom_finish(&w);
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	return err;
}

/* BODY gzipped by zlib at level 1, its stream Z reset (the exporter before): the size, or 0. */
static size_t gzip_len(z_stream *z, const char *body, size_t len, void *out, size_t cap)
{
	deflateReset(z);
	z->next_in = (Bytef *)body;
	z->avail_in = (uInt)len;
	z->next_out = out;
	z->avail_out = (uInt)cap;
	return deflate(z, Z_FINISH) == Z_STREAM_END ? z->total_out : 0;
}

static int parse_int(const char *opt, const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = s ? strtol(s, &end, 10) : 0;
	if (!s || errno || *end || end == s || v < min || v > max) {
		fprintf(stderr, "prombench: %s wants a number from %d to %d, not '%s'\n", opt, min,
			max, s ? s : "");
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	static const char *const sink_names[] = {
		[SINK_KEPT] = "the last scrape's buffer",
		[SINK_MEMSTREAM] = "a new memstream",
		[SINK_NULL] = "/dev/null",
	};
	int n = 200, vms = 8, vcpus = 8, err;
	bool dump = false, odd = false, per_vcpu = true, only = false;
	enum sink sink = SINK_KEPT;
	double cpu0, *cpu, *wall, total = 0;
	size_t len = 0, cap = 0, series = 0, zlen = 0, zcap, ld_len;
	struct libdeflate_compressor *ld;
	double ld_us, zlib_us;
	struct prom_state st;
	struct snapshot snap;
	struct prom_opts o;
	char *body = NULL;
	FILE *nul = NULL;
	z_stream zs = {0};
	void *z;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n"))
			n = parse_int("-n", i + 1 < argc ? argv[++i] : NULL, 1, 1000000);
		else if (!strcmp(argv[i], "--vms"))
			vms = parse_int("--vms", i + 1 < argc ? argv[++i] : NULL, 1, 64);
		else if (!strcmp(argv[i], "--vcpus"))
			vcpus = parse_int("--vcpus", i + 1 < argc ? argv[++i] : NULL, 0, 512);
		else if (!strcmp(argv[i], "--no-per-vcpu"))
			per_vcpu = false;
		else if (!strcmp(argv[i], "--odd-names"))
			odd = true;
		else if (!strcmp(argv[i], "--memstream"))
			sink = SINK_MEMSTREAM;
		else if (!strcmp(argv[i], "--null"))
			sink = SINK_NULL;
		else if (!strcmp(argv[i], "--scrape-only"))
			only = true;
		else if (!strcmp(argv[i], "--dump"))
			dump = true;
		else {
			fprintf(stderr,
				"prombench: unknown argument '%s' (see the source's head)\n",
				argv[i]);
			return 2;
		}
	}
	if (sink == SINK_NULL && !(nul = fopen("/dev/null", "w"))) {
		fprintf(stderr, "prombench: /dev/null: %s\n", strerror(errno));
		return 1;
	}
	prom_opts_default(&o);
	o.collector[PROM_PER_VCPU] = per_vcpu;
	if (fleet_build(&snap, &st, vms, vcpus, odd)) {
		fprintf(stderr, "prombench: cannot build the snapshot (out of memory)\n");
		return 1;
	}
	if (dump) {
		err = scrape(&snap, &st, &o, false, SINK_KEPT, NULL, &body, &len, &cap);
		if (err)
			fprintf(stderr, "prombench: render failed: %s\n", strerror(-err));
		else
			fwrite(body, 1, len, stdout);
		free(body);
		return err ? 1 : 0;
	}
	cpu = calloc((size_t)n, sizeof(*cpu));
	wall = calloc((size_t)n, sizeof(*wall));
	if (!cpu || !wall)
		return 1;
	for (int i = -3; i < n; i++) { /* three to warm up */
		double c = now(CLOCK_PROCESS_CPUTIME_ID), t = now(CLOCK_MONOTONIC);

		err = scrape(&snap, &st, &o, true, sink, nul, &body, &len, &cap);
		if (err) {
			fprintf(stderr, "prombench: render failed: %s\n", strerror(-err));
			return 1;
		}
		if (i >= 0) {
			cpu[i] = now(CLOCK_PROCESS_CPUTIME_ID) - c;
			wall[i] = now(CLOCK_MONOTONIC) - t;
			total += cpu[i];
		}
	}
	/* the text itself, for its size, its series and gzip */
	if (sink == SINK_NULL && scrape(&snap, &st, &o, true, SINK_KEPT, NULL, &body, &len, &cap))
		return 1;
	for (size_t i = 0; i < len; i++)
		series += body[i] != '#' && (!i || body[i - 1] == '\n');
	printf("scrape: %d VMs x %d vCPUs, per_vcpu %s: %zu bytes, %zu series\n", vms, vcpus,
	       per_vcpu ? "on" : "off", len, series);
	printf("scrape CPU (render, process_*) into %s: %.1f us mean, %.1f us p50, %.1f us p99 "
	       "(wall p50 %.1f us), %d scrapes\n",
	       sink_names[sink], 1e6 * total / n, 1e6 * percentile(cpu, (size_t)n, 0.5),
	       1e6 * percentile(cpu, (size_t)n, 0.99), 1e6 * percentile(wall, (size_t)n, 0.5), n);
	if (only)
		goto out;

	/* what else a scrape costs that can be measured here */
	cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < n; i++) {
		struct prom_writer w;

		prom_init_mem(&w, NULL, 0);
		process_metrics(&w);
		prom_finish(&w);
	}
	printf("  of which process_* (/proc reads): %.1f us\n",
	       1e6 * (now(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / n);
	/* as http.c's gzip(): libdeflate, its compressor kept; then zlib's level 1, in one run */
	ld = libdeflate_alloc_compressor(1);
	if (!ld)
		return 1;
	zcap = libdeflate_gzip_compress_bound(ld, len);
	if (zcap < compressBound((uLong)len) + 32)
		zcap = compressBound((uLong)len) + 32;
	z = malloc(zcap);
	if (!z || deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 1;
	cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < n; i++)
		zlen = libdeflate_gzip_compress(ld, body, len, z, zcap);
	ld_us = 1e6 * (now(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / n;
	ld_len = zlen;
	cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < n; i++)
		zlen = gzip_len(&zs, body, len, z, zcap);
	zlib_us = 1e6 * (now(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / n;
	printf("gzip level 1 of the text (Accept-Encoding: gzip): %.1f us, %zu bytes "
	       "(zlib's level 1 in this run: %.1f us, %zu bytes: %.2f of its CPU)\n",
	       ld_us, ld_len, zlib_us, zlen, zlib_us > 0 ? ld_us / zlib_us : 0);
	libdeflate_free_compressor(ld);
	deflateEnd(&zs);
	free(z);
	cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < n; i++) {
		struct vm_stats copy[64];

		for (size_t k = 0; k < snap.n_kvm; k++)
			if (vm_stats_copy(&copy[k], &snap.kvm[k]))
				return 1;
		for (size_t k = 0; k < snap.n_kvm; k++)
			vm_stats_close(&copy[k]);
	}
	printf("session_snapshot's copy of KVM's statistics (and its free): %.1f us\n",
	       1e6 * (now(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / n);
out:
	if (nul)
		fclose(nul);
	free(body);
	free(cpu);
	free(wall);
	prom_state_free(&st);
	snapshot_free(&snap);
	return 0;
}
