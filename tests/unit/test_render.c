// SPDX-License-Identifier: GPL-2.0
/*
 * The renderers are pure: a snapshot built here, with no session, no BPF
 * and no /proc, renders to the text and CSV the commands print.
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "render.h"

/* One VM "web-1" (pid 42) with two vCPUs: FIXED faults and SPURIOUS ones, in SNAP. */
static void build(struct snapshot *snap, unsigned int fixed, unsigned int spurious)
{
	struct vm_row *vm;

	memset(snap, 0, sizeof(*snap));
	snap->wall = 1796000000.5;
	snap->ret_pf.source = RET_PF_FROM_BTF;
	snap->ret_pf.name[5] = strdup("fixed");
	snap->ret_pf.name[6] = strdup("spurious");
	snap->hist_available[KVMMMU_HIST_WALK_TO_SPTE] = true;
	snap->sample_every = 1;
	vm = model_vm(&snap->m, 42, 1);
	assert_non_null(vm);
	snprintf(vm->comm, sizeof(vm->comm), "qemu-system-x86");
	vm->name = "web-1";
	for (int v = 0; v < 2; v++) {
		struct vcpu_row *row = model_row(vm, v, 100 + v);
		struct figures f = {};

		assert_non_null(row);
		snprintf(row->comm, sizeof(row->comm), "CPU %d/KVM", v);
		f.counters[KVMMMU_FAULTS] = fixed + spurious;
		f.ret_pf[5] = fixed;
		f.ret_pf[6] = spurious;
		f.outcomes[KVMMMU_FP_SHADOW][5] = fixed;
		f.outcomes[KVMMMU_FP_SHADOW][6] = spurious - spurious / 2;
		f.outcomes[KVMMMU_FP_FAST][6] = spurious / 2;
		f.hist[KVMMMU_HIST_WALK_TO_SPTE].slots[10] = fixed;
		f.hist[KVMMMU_HIST_WALK_TO_SPTE].count = fixed;
		f.hist[KVMMMU_HIST_WALK_TO_SPTE].sum_ns = fixed * 1500ULL;
		f.hist[KVMMMU_HIST_WALK_TO_SPTE].max_ns = 1800;
		figures_add(&row->f, &f);
		figures_add(&vm->total, &f);
	}
}

static char *text_of(const struct snapshot *cur, const struct snapshot *prev,
		     const struct render_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	render_text(f, cur, prev, o);
	fclose(f);
	return buf;
}

static const struct render_opts opts = {
	.show = {[SECTION_OUTCOMES] = true,
		 [SECTION_TIMELINE] = true,
		 [SECTION_HIST0 + KVMMMU_HIST_WALK_TO_SPTE] = true},
	.per_vcpu = true,
	.only_vcpu = -1,
	.unit_ns = 1,
	.unit = "nsecs",
};

static void text_whole_run(void **state)
{
	struct snapshot snap;
	char *t;

	(void)state;
	build(&snap, 90, 10);
	t = text_of(&snap, NULL, &opts);
	assert_non_null(strstr(t, "\nVM pid 42 (web-1)\n"));
	assert_non_null(strstr(t, "    faults                            200\n"));
	assert_non_null(strstr(t, "    ret_pf_fixed                      180   90.0%\n"));
	assert_non_null(strstr(t, "\nVM pid 42 vCPU 1 (CPU 1/KVM)\n"));
	assert_non_null(strstr(t, "walk_to_spte_ns: 90 samples"));
	free(t);
	snapshot_free(&snap);
}

/* An interval: the difference of two snapshots, and only the new timeline events. */
static void text_interval(void **state)
{
	struct snapshot prev, cur;
	char *t;

	(void)state;
	build(&prev, 90, 10);
	build(&cur, 100, 15);
	cur.timeline = calloc(2, sizeof(*cur.timeline));
	assert_non_null(cur.timeline);
	cur.n_timeline = 2;
	cur.timeline_new = 1; /* the first was in an earlier report */
	for (int i = 0; i < 2; i++) {
		cur.timeline[i].ev.tgid = 42;
		cur.timeline[i].vm_index = 1;
		cur.timeline[i].ev.kind = i ? KVMMMU_EV_DIRTY_LOG_ON : KVMMMU_EV_MEMSLOT_CREATE;
		cur.timeline[i].wall = 1796000000.0 + i;
		cur.timeline[i].faults_between = 7;
	}
	t = text_of(&cur, &prev, &opts);
	assert_non_null(
		strstr(t, "    faults                             30\n")); /* 2 x (10 + 5) */
	assert_non_null(strstr(t, "timeline (new events):\n"));
	assert_non_null(strstr(t, "dirty_log_on"));
	assert_null(strstr(t, "memslot_create"));
	free(t);
	snapshot_free(&prev);
	snapshot_free(&cur);
}

/*
 * Why 4 KiB: guest_memfd's reason with the others, and left out (not a 0)
 * where the run's figures have none, as a CSV from before it.
 */
static void text_not_huge_reasons(void **state)
{
	static const struct render_opts levels = {
		.show = {[SECTION_LEVELS] = true}, .only_vcpu = -1, .unit_ns = 1, .unit = "nsecs"};
	struct snapshot snap;
	char *t;

	(void)state;
	build(&snap, 90, 10);
	snap.m.vms[0].total.counters[KVMMMU_LEVEL_REQUESTED_4K] = 4099;
	snap.m.vms[0].total.counters[KVMMMU_LEVEL_NOT_HUGE_HOST] = 3;
	snap.m.vms[0].total.counters[KVMMMU_LEVEL_NOT_HUGE_GMEM] = 4096;
	t = text_of(&snap, NULL, &levels);
	assert_non_null(strstr(t,
			       "    4k, not huge: dirty logging 0, host mapping 3, NX huge pages "
			       "0, guest_memfd 4096\n"));
	free(t);
	snap.m.vms[0].total.counters[KVMMMU_LEVEL_NOT_HUGE_GMEM] = 0;
	snap.counter_absent[KVMMMU_LEVEL_NOT_HUGE_GMEM] = true;
	t = text_of(&snap, NULL, &levels);
	assert_non_null(strstr(t,
			       "    4k, not huge: dirty logging 0, host mapping 3, NX huge pages "
			       "0\n"));
	free(t);
	snapshot_free(&snap);
}

/* SNAP through render_csv() into a file, and back as a table. */
/* A histogram as its log-linear buckets: each non-empty one, '~' for the gaps. */
static void hist_buckets(void **state)
{
	static const __u64 samples[] = {1000, 1000, 1000, 1300, 8000, 8000};
	struct kvmmmu_hist h = {};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		h.slots[kvmmmu_hist_slot(samples[i])]++;
		h.count++;
		h.sum_ns += samples[i];
		if (samples[i] > h.max_ns)
			h.max_ns = samples[i];
	}
	assert_non_null(f);
	render_hist_buckets(f, &h, "fault_ns", &opts);
	fclose(f);
	assert_non_null(strstr(buf, "fault_ns: 6 samples\n"));
	/* 1000 is in [896, 1024), 1300 in [1280, 1536), 8000 in [7168, 8192); gaps between */
	{
		static const char *const want[] = {"896 1024 3", "~", "1280 1536 1", "~",
						   "7168 8192 2"};
		char *save = NULL, got[64];
		size_t n = 0;

		for (char *line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			unsigned long long lo, hi, count;

			if (sscanf(line, " %llu -> %llu : %llu", &lo, &hi, &count) == 3)
				snprintf(got, sizeof(got), "%llu %llu %llu", lo, hi, count);
			else if (strstr(line, " ~ :"))
				snprintf(got, sizeof(got), "~");
			else
				continue;
			assert_true(n < sizeof(want) / sizeof(want[0]));
			assert_string_equal(got, want[n]);
			n++;
		}
		assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	}
	free(buf);
}

static void csv_of(const struct snapshot *snap, struct csv_table *t)
{
	char err[256], path[] = "/tmp/test_render.XXXXXX";
	int fd = mkstemp(path);
	struct csv_writer w;

	assert_true(fd >= 0);
	assert_int_equal(csv_writer_start(&w, fd, NULL), 0);
	assert_int_equal(render_csv(&w, snap), 0);
	assert_int_equal(csv_writer_close(&w), 0);
	close(fd);
	assert_int_equal(csv_read_file(path, t, err, sizeof(err)), 0);
	unlink(path);
}

static void csv_rows(void **state)
{
	struct snapshot snap;
	struct csv_table t;
	int found = 0;

	(void)state;
	build(&snap, 3, 1);
	csv_of(&snap, &t);
	for (size_t i = 0; i < t.n_rows; i++) {
		const struct csv_record *r = &t.rows[i];

		if (r->pid == 42) {
			assert_string_equal(r->vm, "web-1");
			assert_true(r->ts == 1796000000.5);
		} else {
			assert_null(r->vm); /* kvmmmu's own rows */
		}
		if (r->pid == 42 && r->vcpu == 1 && !strcmp(r->metric, "ret_pf_spurious")) {
			assert_true(r->u64 == 1);
			found++;
		}
		if (r->pid == 42 && r->vcpu == CSV_NO_VCPU && !strcmp(r->metric, "faults")) {
			assert_true(r->u64 == 8);
			found++;
		}
	}
	assert_int_equal(found, 2);
	csv_table_free(&t);
	snapshot_free(&snap);
}

static void same_figures(const struct figures *a, const struct figures *b,
			 const struct snapshot *sa, const struct snapshot *sb)
{
	for (int i = 0; i < KVMMMU_N_COUNTERS; i++)
		assert_true(a->counters[i] == b->counters[i]);
	for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++) {
		int k;

		if (!sa->ret_pf.name[r])
			continue;
		for (k = 0; k < KVMMMU_RET_PF_SLOTS; k++)
			if (sb->ret_pf.name[k] && !strcmp(sb->ret_pf.name[k], sa->ret_pf.name[r]))
				break;
		assert_true(k < KVMMMU_RET_PF_SLOTS);
		assert_true(a->ret_pf[r] == b->ret_pf[k]);
		for (int p = 0; p < KVMMMU_N_FAULT_PATHS; p++)
			assert_true(a->outcomes[p][r] == b->outcomes[p][k]);
	}
	for (int h = 0; h < KVMMMU_N_HISTS; h++) {
		if (!sa->hist_available[h])
			continue;
		assert_memory_equal(&a->hist[h], &b->hist[h], sizeof(a->hist[h]));
	}
	for (int m = 0; m < KVMMMU_LOCK_MODES; m++) {
		assert_memory_equal(&a->lock_wait[m], &b->lock_wait[m], sizeof(a->lock_wait[m]));
		assert_true(a->lock_other_waits[m] == b->lock_other_waits[m]);
	}
	assert_memory_equal(a->mmu, b->mmu, sizeof(a->mmu));
	assert_memory_equal(a->mmu_ns, b->mmu_ns, sizeof(a->mmu_ns));
}

/* What render_csv() writes, snapshot_from_csv() reads back: the compare command's input. */
static void csv_round_trip(void **state)
{
	struct snapshot snap, back;
	struct csv_table t;
	struct vm_row *vm;
	char why[256];

	(void)state;
	build(&snap, 1000, 7);
	snap.lock_ok = snap.events_ok = true;
	snap.sample_every = 4;
	snap.m.health.drops = 3;
	vm = &snap.m.vms[0];
	for (size_t k = 0; k < vm->n_rows; k++) {
		struct figures *f = &vm->rows[k].f;

		/* a bucket in the middle, one at the top (above every le bound), and waits */
		f->hist[KVMMMU_HIST_WALK_TO_SPTE].slots[KVMMMU_HIST_BUCKETS - 1] = 2;
		f->hist[KVMMMU_HIST_WALK_TO_SPTE].count += 2;
		f->lock_wait[KVMMMU_LOCK_WRITE].slots[20] = 5;
		f->lock_wait[KVMMMU_LOCK_WRITE].count = 5;
		f->lock_wait[KVMMMU_LOCK_WRITE].sum_ns = 12345;
		f->lock_wait[KVMMMU_LOCK_WRITE].max_ns = 4000;
		f->lock_other_waits[KVMMMU_LOCK_READ] = 9;
		f->mmu[KVMMMU_SHADOW_PAGES_ZAPPED] = 11;
		f->mmu_ns[DIRTY_LOG_GET_NS] = 777;
	}
	memset(&vm->total, 0, sizeof(vm->total));
	for (size_t k = 0; k < vm->n_rows; k++)
		figures_add(&vm->total, &vm->rows[k].f);
	csv_of(&snap, &t);
	assert_int_equal(snapshot_from_csv(&t, &back, why, sizeof(why)), 0);
	csv_table_free(&t);
	assert_int_equal(back.m.n_vms, 1);
	assert_string_equal(back.m.vms[0].name, "web-1");
	assert_int_equal(back.m.vms[0].n_rows, 2);
	assert_true(back.hist_available[KVMMMU_HIST_WALK_TO_SPTE]);
	assert_false(back.hist_available[KVMMMU_HIST_FAULT]);
	assert_true(back.lock_ok && back.events_ok);
	assert_int_equal(back.sample_every, 4);
	assert_true(back.m.health.drops == 3);
	assert_true(back.wall == snap.wall);
	same_figures(&vm->total, &back.m.vms[0].total, &snap, &back);
	for (size_t k = 0; k < 2; k++) {
		assert_int_equal(back.m.vms[0].rows[k].vcpu, vm->rows[k].vcpu);
		assert_string_equal(back.m.vms[0].rows[k].comm, vm->rows[k].comm);
		same_figures(&vm->rows[k].f, &back.m.vms[0].rows[k].f, &snap, &back);
	}
	snapshot_free(&back);
	snapshot_free(&snap);
}

/* --metric lists: words add up; "default" is the default set, which leaves memslot out. */
static void metric_lists(void **state)
{
	static const char *const empty_names[] = {"default,,", "default,", ",default",
						  "memslot,,paths", ","};
	bool show[N_SECTIONS], with[N_SECTIONS];
	const char *bad = NULL;
	int n = 0;

	(void)state;
	assert_int_equal(render_parse_metrics("default", show, &bad), 0);
	assert_true(show[SECTION_OUTCOMES] && show[SECTION_PATHS] && show[SECTION_TIMELINE]);
	assert_true(show[SECTION_HIST0 + KVMMMU_HIST_FAULT]);
	assert_false(show[SECTION_MEMSLOT] || show[SECTION_HIST0 + KVMMMU_HIST_MEMSLOT]);
	assert_false(show[SECTION_EVENTS] || show[SECTION_PHASES] || show[SECTION_REGIONS]);
	assert_int_equal(render_parse_metrics("memslot,default,memslot_ns", with, &bad), 0);
	for (int s = 0; s < N_SECTIONS; s++) {
		bool extra = s == SECTION_MEMSLOT || s == SECTION_HIST0 + KVMMMU_HIST_MEMSLOT;

		assert_int_equal(with[s], show[s] || extra);
		n += with[s];
	}
	assert_int_equal(render_parse_metrics("memslot", show, &bad), 0);
	for (int s = 0; s < N_SECTIONS; s++)
		assert_int_equal(show[s], s == SECTION_MEMSLOT);
	assert_int_equal(render_parse_metrics("all", show, &bad), 0);
	for (int s = 0; s < N_SECTIONS; s++)
		assert_true(show[s]);
	assert_true(n < N_SECTIONS);
	assert_int_equal(render_parse_metrics("default,nosuch", show, &bad), -EINVAL);
	assert_string_equal(bad, "nosuch");
	assert_int_equal(render_parse_metrics("", show, &bad), -EINVAL);
	/* an empty name in a list is refused as an empty list is */
	for (size_t i = 0; i < sizeof(empty_names) / sizeof(empty_names[0]); i++) {
		bad = NULL;
		assert_int_equal(render_parse_metrics(empty_names[i], show, &bad), -EINVAL);
		assert_string_equal(bad, "");
	}
}

/*
 * What reached the "file": its bytes, how many writes, and those that ended
 * inside a record (not before a record's first line, which is its time).
 */
struct writes {
	char *data;
	size_t len, n, mid_record;
};

static ssize_t record_write(void *cookie, const char *buf, size_t size)
{
	struct writes *w = cookie;
	char *grown = realloc(w->data, w->len + size + 1);

	assert_non_null(grown);
	memcpy(grown + w->len, buf, size);
	w->data = grown;
	w->len += size;
	w->data[w->len] = '\0';
	/* the write before this one ended inside a record: this one goes on with it */
	w->mid_record += w->n++ && size && !isdigit((unsigned char)buf[0]);
	return (ssize_t)size;
}

/*
 * --slower with a traced command on the same stdout: 10,000 records through a
 * 16 KiB buffer, some with the longest VM name, --stack's frames or a wait
 * whose stack was not kept, each write ending at a record's end (the next
 * begins with a record's time), so the command's lines fall between ours.
 */
static void slow_writes_end_at_records(void **state)
{
	static const char long_vm[] =
		"a-vm-name-of-sixty-three-characters-as-long-as-a-name-is-kept-x";
	cookie_io_functions_t io = {.write = record_write};
	struct slow_faults l = {};
	static char buf[16 << 10];
	struct writes w = {};
	struct snapshot facts;
	size_t lines = 0, expected = 0;
	FILE *f;

	(void)state;
	_Static_assert(sizeof(long_vm) == sizeof(l.items[0].vm), "the longest name kept");
	build(&facts, 1, 1);
	facts.slow_stacks = true;
	for (int i = 0; i < 10000; i++) {
		bool waited = i % 3 == 0 || i % 5 == 1;
		struct kvmmmu_slow_fault rec = {.ns = 1000000 + i,
						.tgid = 42,
						.vcpu_id = i % 2,
						.gpa = 0x100000000ULL + i * 4096ULL,
						.gva = ~0ULL,
						.ret = 5,
						.stack_len = i % 3 ? -ENOENT : 24,
						.offcpu_ns = waited ? 5000 : 0,
						.offcpu_max_ns = waited ? 4000 : 0};
		char *stack = NULL;

		/* its line, then its time off the CPU; its frames, or why there are none */
		expected += 2 + (i % 3 == 0 ? 3 : waited);
		if (i % 3 == 0) {
			assert_true(asprintf(&stack,
					     "schedule+0x%x;handle_userfault+0x1e2;"
					     "do_user_addr_fault+0x%x",
					     i, i) > 0);
		}
		slow_faults_append(&l, &rec, 1 + i % 7 / 6, i % 7 == 6 ? long_vm : "web-1",
				   1796000000.5 + i / 1000.0, stack);
	}
	assert_int_equal(l.n, 10000);
	f = fopencookie(&w, "w", io);
	assert_non_null(f);
	assert_int_equal(setvbuf(f, buf, _IOFBF, sizeof(buf)), 0);
	render_slow(f, &l, &facts);
	assert_int_equal(fclose(f), 0);
	for (const char *p = w.data; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(lines, expected);
	assert_non_null(strstr(w.data, long_vm));
	assert_non_null(
		strstr(w.data, "(its stack was not kept: no room for its thread's stacks)"));
	assert_true(w.n > 10);
	assert_int_equal(w.mid_record, 0);
	free(w.data);
	slow_faults_free(&l);
	snapshot_free(&facts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_whole_run), cmocka_unit_test(hist_buckets),
		cmocka_unit_test(text_interval),  cmocka_unit_test(text_not_huge_reasons),
		cmocka_unit_test(csv_rows),	  cmocka_unit_test(csv_round_trip),
		cmocka_unit_test(metric_lists),	  cmocka_unit_test(slow_writes_end_at_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
