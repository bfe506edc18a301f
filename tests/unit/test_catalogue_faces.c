// SPDX-License-Identifier: GPL-2.0
/*
 * A counter's catalogue line decides every face: this test defines the
 * catalogue tables itself (src/core/catalogue.c is then not linked), the
 * real one with walker_errors marked for every face and a Prometheus
 * family, and checks what the text report, CSV, Prometheus and kvmmmu-diff
 * make of it, and that guest_walks, marked for the text report only,
 * stays out of the others. The worked example of docs/architecture.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "derive.h"
#include "render.h"
#include "render_prom.h"

/* the real catalogue, but walker_errors: every face, and a family of its own */
#define EVERY_FACE (KVMMMU_SHOW_EVENTS | KVMMMU_SHOW_PROM | KVMMMU_SHOW_DIFF)
#define SHOW(id, show) (KVMMMU_##id == KVMMMU_WALKER_ERRORS ? EVERY_FACE : (show))
#define PROM(id, prom) (KVMMMU_##id == KVMMMU_WALKER_ERRORS ? "kvmmmu_walker_errors_total" : (prom))
#define C_NAME(id, name, prom, show, help) [KVMMMU_##id] = name,
#define C_SHOW(id, name, prom, show, help) [KVMMMU_##id] = SHOW(id, show),
#define C_PROM(id, name, prom, show, help) [KVMMMU_##id] = PROM(id, prom),
#define C_HELP(id, name, prom, show, help) [KVMMMU_##id] = help,
const char *const kvmmmu_counter_names[KVMMMU_N_COUNTERS] = {KVMMMU_COUNTERS(C_NAME)};
const unsigned int kvmmmu_counter_show[KVMMMU_N_COUNTERS] = {KVMMMU_COUNTERS(C_SHOW)};
const char *const kvmmmu_counter_prom[KVMMMU_N_COUNTERS] = {KVMMMU_COUNTERS(C_PROM)};
const char *const kvmmmu_counter_help[KVMMMU_N_COUNTERS] = {KVMMMU_COUNTERS(C_HELP)};
#define H_NAME(id, name, words, help) [KVMMMU_HIST_##id] = name,
#define H_WORDS(id, name, words, help) [KVMMMU_HIST_##id] = words,
#define H_HELP(id, name, words, help) [KVMMMU_HIST_##id] = help,
const char *const kvmmmu_hist_names[KVMMMU_N_HISTS] = {KVMMMU_HISTS(H_NAME)};
const char *const kvmmmu_hist_words[KVMMMU_N_HISTS] = {KVMMMU_HISTS(H_WORDS)};
const char *const kvmmmu_hist_help[KVMMMU_N_HISTS] = {KVMMMU_HISTS(H_HELP)};
#define M_NAME(id, name, prom, help) [KVMMMU_##id] = name,
#define M_PROM(id, name, prom, help) [KVMMMU_##id] = prom,
#define M_HELP(id, name, prom, help) [KVMMMU_##id] = help,
const char *const kvmmmu_mmu_counter_names[KVMMMU_N_MMU_COUNTERS] = {KVMMMU_MMU_COUNTERS(M_NAME)};
const char *const kvmmmu_mmu_counter_prom[KVMMMU_N_MMU_COUNTERS] = {KVMMMU_MMU_COUNTERS(M_PROM)};
const char *const kvmmmu_mmu_counter_help[KVMMMU_N_MMU_COUNTERS] = {KVMMMU_MMU_COUNTERS(M_HELP)};

/* One VM, "web", of one vCPU: 40 faults, 10 walker errors, 30 guest walks. */
static void build(struct snapshot *s)
{
	struct vm_row *vm;
	struct vcpu_row *row;
	struct figures f = {};

	memset(s, 0, sizeof(*s));
	s->ret_pf.name[1] = strdup("fixed");
	s->sample_every = 1;
	vm = model_vm(&s->m, 100, 1);
	assert_non_null(vm);
	snprintf(vm->comm, sizeof(vm->comm), "qemu-system-x86");
	vm->name = "web";
	row = model_row(vm, 0, 101);
	assert_non_null(row);
	f.counters[KVMMMU_FAULTS] = 40;
	f.counters[KVMMMU_PATH_SHADOW] = 40;
	f.ret_pf[1] = 40;
	f.outcomes[KVMMMU_FP_SHADOW][1] = 40;
	f.counters[KVMMMU_WALKER_ERRORS] = 10;
	f.counters[KVMMMU_GUEST_WALKS] = 30;
	figures_add(&row->f, &f);
	figures_add(&vm->total, &f);
	model_sort(&s->m);
}

static char *text_of(const struct snapshot *s)
{
	struct render_opts o = {.only_vcpu = -1, .unit_ns = 1, .unit = "nsecs"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	o.show[SECTION_EVENTS] = true;
	render_text(f, s, NULL, &o);
	fclose(f);
	return buf;
}

static char *prom_of(const struct snapshot *s)
{
	struct prom_writer w;
	struct prom_opts o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	prom_opts_default(&o);
	prom_init(&w, f);
	render_prom(&w, s, NULL, &o);
	assert_int_equal(prom_finish(&w), 0);
	fclose(f);
	return buf;
}

/* S written as a kvmmmu CSV file at PATH (mkstemp's template). */
static void csv_file(const struct snapshot *s, char *path)
{
	int fd = mkstemp(path);
	struct csv_writer w;

	assert_true(fd >= 0);
	assert_int_equal(csv_writer_start(&w, fd, NULL), 0);
	assert_int_equal(render_csv(&w, s), 0);
	assert_int_equal(csv_writer_close(&w), 0);
	close(fd);
}

static void text_events_line(void **state)
{
	struct snapshot s;
	char *text;

	(void)state;
	build(&s);
	text = text_of(&s);
	assert_non_null(strstr(text, "events: guest_walks=30 walker_errors=10\n"));
	free(text);
	snapshot_free(&s);
}

static void prometheus_family(void **state)
{
	struct snapshot s;
	char *text;

	(void)state;
	build(&s);
	text = prom_of(&s);
	assert_non_null(strstr(text, "# HELP kvmmmu_walker_errors_total walks that ended in a #PF "
				     "for the guest (kvm_mmu_walker_error)\n"
				     "# TYPE kvmmmu_walker_errors_total counter\n"
				     "kvmmmu_walker_errors_total{vm=\"web\"} 10\n"));
	assert_null(strstr(text, "guest_walks")); /* the text report's only */
	free(text);
	snapshot_free(&s);
}

static void diff_row_and_csv(void **state)
{
	char path[] = "/tmp/test_catalogue_faces.XXXXXX", err[256];
	struct snapshot s;
	struct run r = {0};
	const struct scalar *sc;

	(void)state;
	build(&s);
	csv_file(&s, path);
	assert_int_equal(run_load(&r, path, err, sizeof(err)), 0);
	unlink(path);
	/* CSV carries every counter by name; diff compares the marked one per fault */
	assert_int_equal(r.snap.m.vms[0].total.counters[KVMMMU_WALKER_ERRORS], 10);
	sc = run_find(&r, "web", -1, "walker_errors per fault");
	assert_non_null(sc);
	assert_true(sc->value == 0.25);
	assert_null(run_find(&r, "web", -1, "guest_walks per fault"));
	run_free(&r);
	snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_events_line),
		cmocka_unit_test(prometheus_family),
		cmocka_unit_test(diff_row_and_csv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
