// SPDX-License-Identifier: GPL-2.0
/*
 * render_prom on snapshots built here: the families a snapshot gives and
 * those it cannot, per-VM labels (unique, no pid but on kvmmmu_vm_info),
 * the path x outcome counters, the collectors' switches, dirty-log toggles.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "render_prom.h"

static void add_vm_of(struct snapshot *s, int pid, int index, const char *name, __u64 fixed,
		      __u64 fast)
{
	struct vm_row *vm = model_vm(&s->m, pid, index);

	assert_non_null(vm);
	snprintf(vm->comm, sizeof(vm->comm), "qemu-system-x86");
	vm->name = name;
	for (int v = 0; v < 2; v++) {
		struct vcpu_row *row = model_row(vm, v, pid + 1 + v);
		struct figures f = {};

		assert_non_null(row);
		f.counters[KVMMMU_FAULTS] = fixed + fast;
		f.ret_pf[1] = fixed + fast;
		f.outcomes[KVMMMU_FP_SHADOW][1] = fixed;
		f.outcomes[KVMMMU_FP_FAST][1] = fast;
		f.hist[KVMMMU_HIST_WALK_TO_SPTE].slots[kvmmmu_hist_slot(3000)] = fixed;
		f.hist[KVMMMU_HIST_WALK_TO_SPTE].count = fixed;
		f.hist[KVMMMU_HIST_WALK_TO_SPTE].sum_ns = fixed * 3000;
		f.mmu[KVMMMU_SHADOW_PAGES_ZAPPED] = 4;
		figures_add(&row->f, &f);
		figures_add(&vm->total, &f);
	}
}

static void add_vm(struct snapshot *s, int pid, const char *name, __u64 fixed, __u64 fast)
{
	add_vm_of(s, pid, 1, name, fixed, fast);
}

static void build(struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->ret_pf.name[0] = strdup("continue");
	s->ret_pf.name[1] = strdup("fixed");
	s->ret_pf.name[2] = strdup("spurious");
	s->hist_available[KVMMMU_HIST_WALK_TO_SPTE] = true;
	s->events_ok = true;
	s->sample_every = 1;
	add_vm(s, 100, "web-1", 10, 5);
	add_vm(s, 200, "db", 7, 0);
	model_sort(&s->m);
}

static char *render(const struct snapshot *s, const struct prom_state *st,
		    const struct prom_opts *o, int *err)
{
	struct prom_writer w;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	prom_init(&w, f);
	render_prom(&w, s, st, o);
	*err = prom_finish(&w);
	fclose(f);
	return buf;
}

/* The value of the sample line that starts with SERIES, or -1. */
static double sample(const char *text, const char *series)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, series, strlen(series)) && p[strlen(series)] == ' ')
			return strtod(p + strlen(series) + 1, NULL);
	return -1;
}

/* S rendered as a scrape without parameters gets it: every collector but memslot and per_vcpu. */
static char *render_default(const struct snapshot *s)
{
	struct prom_opts o;
	char *text;
	int err;

	prom_opts_default(&o);
	text = render(s, NULL, &o, &err);
	assert_int_equal(err, 0);
	return text;
}

static void vm_families(void **state)
{
	struct snapshot s;
	char *text;

	(void)state;
	build(&s);
	text = render_default(&s);
	/* the table, per VM: summed over paths it is the VM's faults */
	assert_true(sample(text, "kvmmmu_page_faults_total{vm=\"web-1\",path=\"shadow\","
				 "result=\"fixed\"}") == 20);
	assert_true(sample(text, "kvmmmu_page_faults_total{vm=\"web-1\",path=\"fast\","
				 "result=\"fixed\"}") == 10);
	assert_true(sample(text, "kvmmmu_page_faults_total{vm=\"db\",path=\"tdp_mmu\","
				 "result=\"spurious\"}") == 0);
	/* "continue" never ends a fault: no series for it */
	assert_null(strstr(text, "result=\"continue\""));
	assert_true(sample(text, "kvmmmu_vm_info{vm=\"db\",namespace=\"\",pid=\"200\","
				 "vmm=\"qemu\"}") == 1);
	assert_true(sample(text, "kvmmmu_vm_vcpus{vm=\"web-1\"}") == 2);
	assert_true(sample(text, "kvmmmu_shadow_pages_zapped_total{vm=\"db\"}") == 8);
	/* what the probes give: walk-to-SPTE; not the function probes' durations */
	assert_true(sample(text, "kvmmmu_walk_to_spte_duration_seconds_count{vm=\"web-1\"}") == 20);
	assert_true(sample(text, "kvmmmu_walk_to_spte_duration_seconds_bucket{vm=\"web-1\","
				 "le=\"+Inf\"}") == 20);
	assert_null(strstr(text, "kvmmmu_page_fault_duration_seconds"));
	assert_null(strstr(text, "kvmmmu_mmu_lock_wait_seconds")); /* lock_ok is false */
	/* pid only on the info metric; per-vCPU series only with per_vcpu */
	for (const char *p = strstr(text, "pid=\""); p; p = strstr(p + 1, "pid=\"")) {
		const char *start = p;

		while (start > text && start[-1] != '\n')
			start--;
		assert_true(!strncmp(start, "kvmmmu_vm_info{", 15));
	}
	assert_null(strstr(text, "vcpu=\""));
	free(text);
	snapshot_free(&s);
}

/* Why 4 KiB, by reason: guest_memfd's too; a run from before it has no such sample, not a 0. */
static void not_huge_reasons(void **state)
{
	static const char gmem[] =
		"kvmmmu_page_faults_not_huge_total{vm=\"web-1\",reason=\"gmem\"}";
	struct snapshot s;
	char *text;

	(void)state;
	build(&s);
	for (size_t i = 0; i < s.m.n_vms; i++)
		if (!strcmp(s.m.vms[i].name, "web-1")) {
			s.m.vms[i].total.counters[KVMMMU_LEVEL_NOT_HUGE_HOST] = 3;
			s.m.vms[i].total.counters[KVMMMU_LEVEL_NOT_HUGE_GMEM] = 4096;
		}
	text = render_default(&s);
	assert_true(sample(text, gmem) == 4096);
	assert_true(sample(text, "kvmmmu_page_faults_not_huge_total{vm=\"web-1\","
				 "reason=\"host\"}") == 3);
	free(text);
	s.counter_absent[KVMMMU_LEVEL_NOT_HUGE_GMEM] = true;
	text = render_default(&s);
	assert_null(strstr(text, "reason=\"gmem\""));
	assert_true(sample(text, "kvmmmu_page_faults_not_huge_total{vm=\"web-1\","
				 "reason=\"host\"}") == 3);
	free(text);
	snapshot_free(&s);
}

static void collectors(void **state)
{
	struct snapshot s;
	struct prom_opts o;
	char *text;
	int err;

	(void)state;
	build(&s);
	prom_opts_default(&o);
	o.collector[PROM_PER_VCPU] = true;
	o.collector[PROM_LATENCY] = false;
	o.collector[PROM_MMU_EVENTS] = false;
	text = render(&s, NULL, &o, &err);
	assert_int_equal(err, 0);
	assert_true(sample(text, "kvmmmu_vcpu_page_faults_total{vm=\"web-1\",vcpu=\"1\","
				 "result=\"fixed\"}") == 15);
	assert_null(strstr(text, "_bucket{vm=\"web-1\",vcpu")); /* never histograms per vCPU */
	assert_null(strstr(text, "walk_to_spte"));
	assert_null(strstr(text, "shadow_pages"));
	assert_int_equal(prom_collector_index("mmu_lock"), PROM_MMU_LOCK);
	assert_int_equal(prom_collector_index("nope"), -1);
	assert_true(prom_collector_ok(&s, PROM_LATENCY));
	assert_false(prom_collector_ok(&s, PROM_MEMSLOT));
	free(text);
	snapshot_free(&s);
}

/* Two VMs of one name are told apart; one VM keeps its plain name. */
static void unique_vm_labels(void **state)
{
	struct snapshot s;
	char *text;

	(void)state;
	build(&s);
	add_vm(&s, 300, "db", 1, 0);
	model_sort(&s.m);
	text = render_default(&s);
	assert_non_null(strstr(text, "vm=\"db:200\""));
	assert_non_null(strstr(text, "vm=\"db:300\""));
	assert_null(strstr(text, "vm=\"db\""));
	assert_non_null(strstr(text, "vm=\"web-1\""));
	free(text);
	snapshot_free(&s);
}

/* A process's two VMs (KVM's selftests make them in turn): two series, each VM its own. */
static void vms_of_one_process(void **state)
{
	struct snapshot s;
	char *text;

	(void)state;
	build(&s);
	add_vm_of(&s, 200, 2, "db", 3, 0);
	model_sort(&s.m);
	text = render_default(&s);
	assert_true(sample(text, "kvmmmu_vm_vcpus{vm=\"db:200/1\"}") == 2);
	assert_true(sample(text, "kvmmmu_vm_vcpus{vm=\"db:200/2\"}") == 2);
	assert_true(sample(text, "kvmmmu_shadow_pages_zapped_total{vm=\"db:200/2\"}") == 8);
	assert_null(strstr(text, "vm=\"db\""));
	assert_null(strstr(text, "vm=\"db:200\""));
	assert_non_null(strstr(text, "vm=\"web-1\"")); /* a VMM with one VM: as before */
	free(text);
	snapshot_free(&s);
}

static void dirty_log_toggles(void **state)
{
	struct timeline_event ev[3] = {};
	struct prom_state st = {};
	struct snapshot s;
	struct prom_opts o;
	char *text;
	int err;

	(void)state;
	build(&s);
	ev[0].ev = (struct kvmmmu_event){
		.tgid = 100, .kind = KVMMMU_EV_DIRTY_LOG_ON, .duration_ns = 2000000};
	ev[1].ev = (struct kvmmmu_event){
		.tgid = 100, .kind = KVMMMU_EV_GET_DIRTY_LOG, .duration_ns = 5};
	ev[2].ev = (struct kvmmmu_event){
		.tgid = 100, .kind = KVMMMU_EV_DIRTY_LOG_OFF, .duration_ns = 45000000000ULL};
	for (int i = 0; i < 3; i++)
		ev[i].vm_index = 1;
	s.timeline = ev;
	s.n_timeline = 3;
	assert_int_equal(prom_state_update(&st, &s), 0);
	s.timeline_new = 3; /* a second snapshot with nothing new adds nothing */
	assert_int_equal(prom_state_update(&st, &s), 0);
	s.timeline = NULL;
	s.n_timeline = 0;
	prom_opts_default(&o);
	text = render(&s, &st, &o, &err);
	assert_int_equal(err, 0);
	assert_true(sample(text, "kvmmmu_dirty_log_toggle_duration_seconds_count{vm=\"web-1\","
				 "direction=\"enable\"}") == 1);
	assert_true(sample(text, "kvmmmu_dirty_log_toggle_duration_seconds_sum{vm=\"web-1\","
				 "direction=\"disable\"}") == 45);
	assert_true(sample(text, "kvmmmu_dirty_log_toggle_duration_seconds_count{vm=\"db\","
				 "direction=\"disable\"}") == 0);
	free(text);
	prom_state_forget(&st, 100);
	assert_int_equal(st.n_vms, 0);
	prom_state_free(&st);
	snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vm_families),	     cmocka_unit_test(collectors),
		cmocka_unit_test(unique_vm_labels),  cmocka_unit_test(vms_of_one_process),
		cmocka_unit_test(dirty_log_toggles), cmocka_unit_test(not_huge_reasons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
