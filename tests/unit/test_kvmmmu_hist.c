// SPDX-License-Identifier: GPL-2.0
/* Log-linear buckets and percentiles, checked against brute force. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model.h"

static __u32 brute_log2(__u64 v)
{
	__u32 r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static void log2_matches_brute_force(void **state)
{
	(void)state;
	for (int bit = 0; bit < 64; bit++) {
		__u64 v = 1ULL << bit;

		assert_int_equal(kvmmmu_log2(v), bit);
		assert_int_equal(kvmmmu_log2(v | (v - 1)), bit);
		if (bit > 1)
			assert_int_equal(kvmmmu_log2(v + 1), brute_log2(v + 1));
	}
}

/* Every value lies within its bucket's bounds, buckets are contiguous, width <= 25%. */
static void buckets_cover_values(void **state)
{
	(void)state;
	for (__u32 b = 0; b + 1 < KVMMMU_HIST_BUCKETS; b++) {
		__u64 lo = kvmmmu_hist_slot_low(b), hi = kvmmmu_hist_slot_high(b);

		assert_true(lo <= hi);
		assert_int_equal(kvmmmu_hist_slot_low(b + 1), hi + 1);
		assert_int_equal(kvmmmu_hist_slot(lo), b);
		assert_int_equal(kvmmmu_hist_slot(hi), b);
		if (lo >= KVMMMU_HIST_SUB)
			assert_true((double)(hi - lo + 1) <= 0.25 * (double)lo + 1e-9);
	}
	srandom(42);
	for (int i = 0; i < 200000; i++) {
		__u64 v = ((__u64)random() << 31 | (__u64)random()) >> (random() % 62);
		__u32 b = kvmmmu_hist_slot(v);

		assert_true(b < KVMMMU_HIST_BUCKETS);
		assert_true(kvmmmu_hist_slot_low(b) <= v);
		if (b + 1 < KVMMMU_HIST_BUCKETS)
			assert_true(v <= kvmmmu_hist_slot_high(b));
	}
	assert_int_equal(kvmmmu_hist_slot(~0ULL), KVMMMU_HIST_BUCKETS - 1);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The reported percentile is within one bucket (<= 25%) above the exact one, never below. */
static void percentiles_match_sorted_samples(void **state)
{
	static const double ps[] = {0.5, 0.9, 0.99, 0.999, 1.0};
	enum { N = 20011 };
	__u64 *v = malloc(N * sizeof(*v));
	struct kvmmmu_hist h;

	(void)state;
	memset(&h, 0, sizeof(h));
	srandom(7);
	for (int i = 0; i < N; i++) {
		/* a long-tailed mix like fault latencies: microseconds, some milliseconds */
		v[i] = 1000 + (__u64)(random() % 20000) +
		       (random() % 100 == 0 ? random() % 5000000 : 0);
		h.slots[kvmmmu_hist_slot(v[i])]++;
		h.count++;
		h.sum_ns += v[i];
		if (v[i] > h.max_ns)
			h.max_ns = v[i];
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		size_t rank = (size_t)(ps[i] * N + 0.999999999);
		__u64 exact = v[(rank ? rank : 1) - 1], got = hist_percentile(&h, ps[i]);

		assert_true(got >= exact);
		assert_true((double)got <= (double)exact * 1.25 + 1);
	}
	assert_int_equal(hist_percentile(&h, 1.0), h.max_ns);
	free(v);
}

static void percentile_of_empty_and_single(void **state)
{
	struct kvmmmu_hist h;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(hist_percentile(&h, 0.5), 0);
	h.slots[kvmmmu_hist_slot(3000)] = 1;
	h.count = 1;
	h.max_ns = 3000;
	assert_int_equal(hist_percentile(&h, 0.5), 3000);
	assert_int_equal(hist_percentile(&h, 0.999), 3000);
}

static void delta_subtracts_matching_rows(void **state)
{
	struct model prev = {}, cur = {}, d = {};
	struct vm_row *vm;

	(void)state;
	vm = model_vm(&prev, 10, 1);
	model_row(vm, 0, 100)->f.counters[KVMMMU_FAULTS] = 5;
	vm->total.counters[KVMMMU_FAULTS] = 5;
	vm = model_vm(&cur, 10, 1);
	model_row(vm, 0, 100)->f.counters[KVMMMU_FAULTS] = 12;
	model_row(vm, -1, 101)->f.counters[KVMMMU_FAULTS] = 3;
	vm->total.counters[KVMMMU_FAULTS] = 15;
	model_vm(&cur, 11, 1)->total.counters[KVMMMU_FAULTS] = 4;
	assert_int_equal(model_delta(&d, &cur, &prev), 0);
	assert_int_equal(d.vms[0].total.counters[KVMMMU_FAULTS], 10);
	assert_int_equal(d.vms[0].rows[0].f.counters[KVMMMU_FAULTS], 7);
	assert_int_equal(d.vms[0].rows[1].f.counters[KVMMMU_FAULTS], 3);
	assert_int_equal(d.vms[1].total.counters[KVMMMU_FAULTS], 4);
	model_free(&d);
	model_free(&cur);
	model_free(&prev);
}

/* A thread shown without a vCPU, then tied to vCPU 0: its interval is the difference. */
static void delta_follows_a_thread_to_its_vcpu(void **state)
{
	struct model prev = {}, cur = {}, d = {};

	(void)state;
	model_row(model_vm(&prev, 10, 1), -1, 101)->f.counters[KVMMMU_FAULTS] = 5;
	model_row(model_vm(&cur, 10, 1), 0, 101)->f.counters[KVMMMU_FAULTS] = 12;
	assert_int_equal(model_delta(&d, &cur, &prev), 0);
	assert_int_equal(d.vms[0].rows[0].vcpu, 0);
	assert_int_equal(d.vms[0].rows[0].f.counters[KVMMMU_FAULTS], 7);
	model_free(&d);
	model_free(&cur);
	model_free(&prev);
}

/* An interval's max is its own, not the whole run's: exact or a bucket bound. */
static void interval_max_is_the_intervals(void **state)
{
	static struct figures prev, cur, d;
	struct kvmmmu_hist *p = &prev.hist[0], *c = &cur.hist[0];

	(void)state;
	/* before: one 5 ms fault; this interval: two 3 us faults */
	p->slots[kvmmmu_hist_slot(5000000)] = 1;
	p->count = 1;
	p->max_ns = 5000000;
	*c = *p;
	c->slots[kvmmmu_hist_slot(3000)] += 2;
	c->count = 3;
	figures_sub(&d, &cur, &prev);
	assert_int_equal(d.hist[0].count, 2);
	assert_true(d.hist[0].max_ns >= 3000);
	assert_true(d.hist[0].max_ns == kvmmmu_hist_slot_high(kvmmmu_hist_slot(3000)));
	/* the run's max falls in this interval's top bucket: it is this interval's */
	c->slots[kvmmmu_hist_slot(7000000)]++;
	c->count++;
	c->max_ns = 7000000;
	figures_sub(&d, &cur, &prev);
	assert_int_equal(d.hist[0].max_ns, 7000000);
	/* nothing in the interval */
	figures_sub(&d, &cur, &cur);
	assert_int_equal(d.hist[0].max_ns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(log2_matches_brute_force),
		cmocka_unit_test(buckets_cover_values),
		cmocka_unit_test(percentiles_match_sorted_samples),
		cmocka_unit_test(percentile_of_empty_and_single),
		cmocka_unit_test(delta_subtracts_matching_rows),
		cmocka_unit_test(interval_max_is_the_intervals),
		cmocka_unit_test(delta_follows_a_thread_to_its_vcpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
