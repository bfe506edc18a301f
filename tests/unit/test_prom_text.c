// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text writer: its output, read back line by line here, keeps
 * the exposition format's rules, and a broken rule is an error, not output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "prom_text.h"

struct out {
	char *buf;
	size_t len;
	FILE *f;
	struct prom_writer w;
};

static void open_out(struct out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
	prom_init(&o->w, o->f);
}

static int close_out(struct out *o)
{
	int err = prom_finish(&o->w);

	fclose(o->f);
	return err;
}

/* The LINE-th line (from 0) of TEXT, in BUF. */
static const char *line(const char *text, int n, char *buf, size_t len)
{
	const char *p = text, *end;

	while (n-- > 0 && (p = strchr(p, '\n')))
		p++;
	assert_non_null(p);
	end = strchr(p, '\n');
	assert_non_null(end);
	snprintf(buf, len, "%.*s", (int)(end - p), p);
	return buf;
}

static void counter_family(void **state)
{
	struct prom_label l[] = {{"vm", "web-1"}, {"result", "fixed"}};
	struct out o;
	char b[256];

	(void)state;
	open_out(&o);
	prom_family(&o.w, "kvmmmu_page_faults_total", PROM_COUNTER, "Faults, by outcome.");
	prom_u64(&o.w, l, 2, 18446744073709551615ULL);
	l[1].value = "spurious";
	prom_u64(&o.w, l, 2, 0);
	assert_int_equal(close_out(&o), 0);
	assert_string_equal(line(o.buf, 0, b, sizeof(b)),
			    "# HELP kvmmmu_page_faults_total Faults, by outcome.");
	assert_string_equal(line(o.buf, 1, b, sizeof(b)),
			    "# TYPE kvmmmu_page_faults_total counter");
	/* u64 counters exact, not through a double */
	assert_string_equal(line(o.buf, 2, b, sizeof(b)),
			    "kvmmmu_page_faults_total{vm=\"web-1\",result=\"fixed\"} "
			    "18446744073709551615");
	assert_string_equal(line(o.buf, 3, b, sizeof(b)),
			    "kvmmmu_page_faults_total{vm=\"web-1\",result=\"spurious\"} 0");
	free(o.buf);
}

static void escaping(void **state)
{
	struct prom_label l[] = {{"vm", "a\"b\\c\nd,e f"}};
	struct out o;
	char b[256];

	(void)state;
	open_out(&o);
	prom_family(&o.w, "kvmmmu_vm_info", PROM_GAUGE, "back\\slash and\nnewline \"kept\"");
	prom_u64(&o.w, l, 1, 1);
	prom_family(&o.w, "kvmmmu_up", PROM_GAUGE, NULL);
	prom_double(&o.w, NULL, 0, 0.5);
	assert_int_equal(close_out(&o), 0);
	/* HELP escapes backslash and newline only; label values '"' too */
	assert_string_equal(line(o.buf, 0, b, sizeof(b)),
			    "# HELP kvmmmu_vm_info back\\\\slash and\\nnewline \"kept\"");
	assert_string_equal(line(o.buf, 2, b, sizeof(b)),
			    "kvmmmu_vm_info{vm=\"a\\\"b\\\\c\\nd,e f\"} 1");
	assert_string_equal(line(o.buf, 3, b, sizeof(b)), "# HELP kvmmmu_up ");
	assert_string_equal(line(o.buf, 5, b, sizeof(b)), "kvmmmu_up 0.5");
	free(o.buf);
}

/* Parses "NAME_bucket{...le="X"} N" lines: bounds ascending, counts cumulative, +Inf last. */
static void histogram_rules(void **state)
{
	struct prom_label l[] = {{"vm", "web-1"}, {"path", "tdp_mmu"}};
	struct kvmmmu_hist h = {};
	uint64_t values[] = {0,	   1,	    1023,	    1024,	    5000,
			     5000, 1000000, 34359738367ULL, 34359738368ULL, 1ULL << 40};
	double last_le = -1, sum = 0;
	uint64_t last_n = 0, inf = 0, count = 0;
	int buckets = 0;
	struct out o;
	char *p, *save;

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		h.slots[kvmmmu_hist_slot(values[i])]++;
		h.count++;
		h.sum_ns += values[i];
	}
	open_out(&o);
	prom_family(&o.w, "kvmmmu_page_fault_duration_seconds", PROM_HISTOGRAM, "Fault time.");
	prom_histogram(&o.w, l, 2, &h);
	assert_int_equal(close_out(&o), 0);
	for (p = strtok_r(o.buf, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		const char *le = strstr(p, "le=\"");
		unsigned long long n;

		if (*p == '#')
			continue;
		if (!strncmp(p, "kvmmmu_page_fault_duration_seconds_bucket{", 42)) {
			assert_non_null(le);
			assert_non_null(strstr(p, "vm=\"web-1\",path=\"tdp_mmu\",le=\""));
			assert_int_equal(sscanf(strrchr(p, ' ') + 1, "%llu", &n), 1);
			assert_true(n >= last_n); /* cumulative */
			last_n = n;
			if (!strncmp(le, "le=\"+Inf\"", 9)) {
				inf = n;
				continue;
			}
			assert_int_equal(inf, 0); /* nothing after +Inf */
			assert_true(strtod(le + 4, NULL) > last_le);
			last_le = strtod(le + 4, NULL);
			buckets++;
			/* every value counted at or under a bound is at most that bound */
			for (size_t i = 0, under = 0; i <= sizeof(values) / sizeof(values[0]);
			     i++) {
				if (i == sizeof(values) / sizeof(values[0])) {
					assert_int_equal(under, n);
					break;
				}
				under += (double)values[i] / 1e9 <= last_le;
			}
		} else if (!strncmp(p, "kvmmmu_page_fault_duration_seconds_sum{", 39)) {
			sum = strtod(strrchr(p, ' ') + 1, NULL);
		} else if (!strncmp(p, "kvmmmu_page_fault_duration_seconds_count{", 41)) {
			assert_int_equal(
				sscanf(strrchr(p, ' ') + 1, "%llu", (unsigned long long *)&count),
				1);
		} else {
			fail_msg("unexpected line: %s", p);
		}
	}
	assert_int_equal(buckets, 26); /* 2^10 - 1 ns .. 2^35 - 1 ns */
	assert_int_equal(inf, 10);
	assert_int_equal(count, inf);
	assert_true(sum == (double)h.sum_ns / 1e9); /* in seconds, every digit kept */
	free(o.buf);
}

static void rules_enforced(void **state)
{
	struct prom_label dup[] = {{"vm", "a"}, {"vm", "b"}};
	struct prom_label bad[] = {{"1vm", "a"}};
	struct prom_label reserved[] = {{"__name__", "a"}};
	struct prom_label le[] = {{"le", "1"}};
	struct kvmmmu_hist h = {};
	struct out o;

	(void)state;
	open_out(&o); /* a sample before any family */
	prom_u64(&o.w, NULL, 0, 1);
	assert_int_equal(close_out(&o), -EINVAL);
	free(o.buf);

	open_out(&o); /* a family announced twice: its lines would not be together */
	prom_family(&o.w, "a_total", PROM_COUNTER, "x");
	prom_family(&o.w, "b", PROM_GAUGE, "x");
	prom_family(&o.w, "a_total", PROM_COUNTER, "x");
	assert_int_equal(close_out(&o), -EEXIST);
	free(o.buf);

	open_out(&o);
	prom_family(&o.w, "9lives", PROM_GAUGE, "x");
	assert_int_equal(close_out(&o), -EINVAL);
	free(o.buf);

	const struct prom_label *labels[] = {dup, bad, reserved};
	size_t n[] = {2, 1, 1};

	for (size_t i = 0; i < 3; i++) {
		open_out(&o);
		prom_family(&o.w, "g", PROM_GAUGE, "x");
		prom_u64(&o.w, labels[i], n[i], 1);
		assert_int_equal(close_out(&o), -EINVAL);
		/* nothing of the bad sample was written */
		assert_null(strstr(o.buf, "\ng"));
		free(o.buf);
	}

	open_out(&o); /* a histogram's own "le" */
	prom_family(&o.w, "h_seconds", PROM_HISTOGRAM, "x");
	prom_histogram(&o.w, le, 1, &h);
	assert_int_equal(close_out(&o), -EINVAL);
	free(o.buf);

	open_out(&o); /* a counter sample in a histogram family, a negative counter */
	prom_family(&o.w, "h_seconds", PROM_HISTOGRAM, "x");
	prom_u64(&o.w, NULL, 0, 1);
	assert_int_equal(close_out(&o), -EINVAL);
	free(o.buf);
	open_out(&o);
	prom_family(&o.w, "c_total", PROM_COUNTER, "x");
	prom_double(&o.w, NULL, 0, -1);
	assert_int_equal(close_out(&o), -EINVAL);
	free(o.buf);

	assert_true(prom_valid_name("kvmmmu:rate5m", 0));
	assert_false(prom_valid_name("kvmmmu:rate5m", 1));
	assert_false(prom_valid_name("", 0));
	assert_false(prom_valid_name("a-b", 0));
}

/*
 * Text past the writer's buffer: a label value longer than it (written
 * past it), and many samples (flushed in pieces); through a FILE and into
 * memory the same bytes.
 */
static void long_text(void **state)
{
	size_t big = 3 * PROM_BUF_SIZE, len, cap;
	char *value = malloc(big + 1), *mem;
	struct prom_label l[] = {{"vm", value}}, small[] = {{"vm", "web-1"}};
	struct prom_writer w;
	struct out o;

	(void)state;
	assert_non_null(value);
	memset(value, 'v', big);
	value[big] = '\0';
	value[7] = '"'; /* escaped in the middle of a run */
	open_out(&o);
	prom_init_mem(&w, NULL, 0);
	for (struct prom_writer *p = &o.w; p; p = p == &o.w ? &w : NULL) {
		prom_family(p, "kvmmmu_vm_info", PROM_GAUGE, "A VM.");
		for (uint64_t i = 0; i < 2000; i++)
			prom_u64(p, i % 500 ? small : l, 1, i * 1000003);
	}
	assert_int_equal(close_out(&o), 0);
	assert_int_equal(prom_finish_mem(&w, &mem, &len, &cap), 0);
	assert_int_equal(len, o.len);
	assert_true(len > 4 * big && len < cap);
	assert_memory_equal(mem, o.buf, len);
	assert_non_null(strstr(o.buf, "{vm=\"vvvvvvv\\\"vvv"));
	assert_non_null(strstr(o.buf, "{vm=\"web-1\"} 1999005997\n"));
	free(mem);
	free(o.buf);
	free(value);
}

/* A writer into memory gives its text only when every rule held; the caller's buffer either way. */
static void memory(void **state)
{
	struct prom_writer w;
	char *text = malloc(8);
	size_t len, cap;

	(void)state;
	assert_non_null(text);
	prom_init_mem(&w, text, 8); /* grown as it goes */
	prom_family(&w, "kvmmmu_up", PROM_GAUGE, "Up.");
	prom_u64(&w, NULL, 0, 18446744073709551615ULL);
	assert_int_equal(prom_finish_mem(&w, &text, &len, &cap), 0);
	assert_string_equal(text, "# HELP kvmmmu_up Up.\n# TYPE kvmmmu_up gauge\n"
				  "kvmmmu_up 18446744073709551615\n");
	assert_int_equal(len, strlen(text));
	prom_init_mem(&w, text, cap); /* kept for another */
	prom_family(&w, "kvmmmu_up", PROM_GAUGE, "Up.");
	prom_family(&w, "kvmmmu_up", PROM_GAUGE, "Up.");
	assert_int_equal(prom_finish_mem(&w, &text, &len, &cap), -EEXIST);
	assert_null(text); /* freed */
	assert_int_equal(len, 0);
	prom_init_mem(&w, NULL, 0); /* nothing written, nothing taken */
	assert_int_equal(prom_finish(&w), 0);
	prom_init_mem(&w, NULL, 0);
	assert_int_equal(prom_finish_mem(&w, &text, &len, &cap), 0);
	assert_string_equal(text, "");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counter_family),  cmocka_unit_test(escaping),
		cmocka_unit_test(histogram_rules), cmocka_unit_test(rules_enforced),
		cmocka_unit_test(long_text),	   cmocka_unit_test(memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
