// SPDX-License-Identifier: GPL-2.0
/*
 * A fleet's scrape byte for byte: the synthetic 8 VMs x 8 vCPUs of
 * tests/tools/promfleet.h (every histogram, KVM's statistics per VM and
 * vCPU, a VM name with each character a label escapes) rendered as the
 * exporter renders it must hash as it did before the writer was made
 * faster (issue 25): its length and FNV-1a were taken from the renderer of
 * 1936faa, but for kvmmmu_page_fault_duration_seconds' HELP line, which
 * says since the handlers' entries became optional that both paths are
 * timed from the fault's start (30 bytes longer, once a scrape), and for
 * the not-huge reason gmem: its sample per VM, a longer HELP line, and every
 * value drawn after its counter another (the fleet draws one per counter;
 * with the values blanked, the texts differ by those lines alone). Through a
 * FILE and into memory alike. On a mismatch the text is
 * left in /tmp, to diff against `prombench --dump` of an older build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hash.h"
#include "../tools/promfleet.h"

static void expect(const char *text, size_t len, size_t want_len, uint64_t want_hash,
		   const char *keep)
{
	uint64_t h = HASH_INIT;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 1099511628211ULL;
	if (len != want_len || h != want_hash) {
		FILE *f = fopen(keep, "w");

		if (f) {
			fwrite(text, 1, len, f);
			fclose(f);
		}
		fail_msg("%zu bytes hashing to %#llx, not %zu bytes and %#llx (the text: %s)", len,
			 (unsigned long long)h, want_len, (unsigned long long)want_hash, keep);
	}
}

/* The fleet rendered through a memstream, then into the writer's own memory. */
static void fleet(bool odd_names, bool per_vcpu, size_t want_len, uint64_t want_hash)
{
	struct prom_writer w;
	struct prom_state st;
	struct snapshot s;
	struct prom_opts o;
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f;

	assert_int_equal(fleet_build(&s, &st, 8, 8, odd_names), 0);
	prom_opts_default(&o);
	o.collector[PROM_MEMSLOT] = true; /* on by default when the hashes were taken */
	o.collector[PROM_PER_VCPU] = per_vcpu;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	prom_init(&w, f);
	render_prom(&w, &s, &st, &o);
	assert_int_equal(prom_finish(&w), 0);
	fclose(f);
	expect(text, len, want_len, want_hash, "/tmp/kvmmmu-prom-fleet.txt");
	free(text);

	/* twice into memory: a buffer too small to start with, then the one kept */
	text = malloc(100);
	cap = 100;
	for (int round = 0; round < 2; round++) {
		prom_init_mem(&w, text, cap);
		render_prom(&w, &s, &st, &o);
		assert_int_equal(prom_finish_mem(&w, &text, &len, &cap), 0);
		assert_true(len < cap && !text[len]);
		expect(text, len, want_len, want_hash, "/tmp/kvmmmu-prom-fleet-mem.txt");
	}
	free(text);
	prom_state_free(&st);
	snapshot_free(&s);
}

static void fleet_per_vcpu(void **state)
{
	(void)state;
	fleet(true, true, 481102, 0x8a61563713cc58c7ULL);
}

static void fleet_default(void **state)
{
	(void)state;
	fleet(false, false, 436003, 0x76def13b0ed0a8baULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fleet_per_vcpu),
		cmocka_unit_test(fleet_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
