// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the CSV writer and reader: round trip, older versions, rejections. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "csv.h"

static char *write_sample(size_t *len)
{
	const struct csv_meta meta = {
		.tool = "test", .label = "tdp=N, run 1", .command_line = "a b"};
	struct csv_writer w;
	char *buf;
	FILE *f = tmpfile();
	long size;
	struct csv_row row = {.ts = 1764484390.5,
			      .pid = 42,
			      .comm = "CPU 0/KVM",
			      .vcpu = 0,
			      .source = "kvm_stats",
			      .metric = "pf_taken",
			      .kind = CSV_U64,
			      .u64 = 18446744073709551615ULL,
			      .vm = "web-1",
			      .vm_index = 1};

	assert_non_null(f);
	assert_int_equal(csv_writer_start(&w, fileno(f), &meta), 0);
	size = lseek(fileno(f), 0, SEEK_CUR);
	assert_int_equal(csv_write_row(&w, &row), 0);
	/* rows reach the file a batch at a time, never one by one */
	assert_int_equal(lseek(fileno(f), 0, SEEK_CUR), size);
	row.comm = "odd \"name\", with comma";
	row.vm = "db,,x \"1\"";
	row.vm_index = 2;
	row.vcpu = CSV_NO_VCPU;
	row.source = "load";
	row.metric = "populate_s";
	row.kind = CSV_F64;
	row.f64 = 0.123456789;
	assert_int_equal(csv_write_row(&w, &row), 0);
	row.comm = "line\nbreak";
	row.vm = NULL;
	row.vm_index = 0;
	row.metric = "fault_ns";
	row.le = "+Inf";
	row.kind = CSV_U64;
	row.u64 = 7;
	assert_int_equal(csv_write_row(&w, &row), 0);
	assert_int_equal(csv_writer_close(&w), 0);
	size = lseek(fileno(f), 0, SEEK_CUR);
	buf = calloc(1, (size_t)size + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fileno(f), buf, (size_t)size, 0), size);
	*len = (size_t)size;
	fclose(f);
	return buf;
}

/* A path that opens but takes no bytes is refused at open, with the reason. */
static void full_device_refused_at_open(void **state)
{
	struct csv_writer w;

	(void)state;
	if (access("/dev/full", W_OK)) {
		printf("SKIP: no writable /dev/full\n");
		skip();
	}
	assert_int_equal(csv_writer_open(&w, "/dev/full", NULL), -ENOSPC);
	assert_int_equal(csv_writer_open(&w, "/nonexistent/dir/x.csv", NULL), -ENOENT);
}

static void round_trip(void **state)
{
	struct csv_table t;
	char err[256];
	size_t len;
	char *buf = write_sample(&len);
	FILE *f = fmemopen(buf, len, "r");

	(void)state;
	assert_int_equal(strncmp(buf, CSV_MAGIC "\n", strlen(CSV_MAGIC) + 1), 0);
	assert_non_null(strstr(buf, "\n" CSV_HEADER "\n"));
	assert_int_equal(csv_read_stream(f, &t, err, sizeof(err)), 0);
	assert_string_equal(csv_table_meta(&t, "tool"), "test");
	assert_string_equal(csv_table_meta(&t, "label"), "tdp=N, run 1");
	assert_non_null(csv_table_meta(&t, "kernel"));
	assert_non_null(csv_table_meta(&t, "tdp_mmu"));
	assert_non_null(csv_table_meta(&t, "hostname"));
	assert_non_null(csv_table_meta(&t, "start_time"));
	assert_string_equal(csv_table_meta(&t, "command"), "a b");
	assert_int_equal(t.n_rows, 3);
	assert_string_equal(t.rows[0].comm, "CPU 0/KVM");
	assert_int_equal(t.rows[0].vcpu, 0);
	assert_int_equal(t.rows[0].pid, 42);
	/* counters are read as integers: 2^64 - 1 exactly, not the double 2^64 */
	assert_int_equal(t.rows[0].kind, CSV_U64);
	assert_true(t.rows[0].u64 == 18446744073709551615ULL);
	assert_null(t.rows[0].le);
	assert_int_equal(t.version, 3);
	assert_string_equal(t.rows[0].vm, "web-1");
	assert_int_equal(t.rows[0].vm_index, 1);
	assert_int_equal(t.rows[1].vm_index, 2);
	assert_int_equal(t.rows[2].vm_index, 0);
	assert_string_equal(t.rows[1].vm, "db,,x \"1\""); /* quoted on the way out, whole back */
	assert_null(t.rows[2].vm);
	assert_string_equal(t.rows[1].comm, "odd \"name\", with comma");
	assert_int_equal(t.rows[1].vcpu, CSV_NO_VCPU);
	assert_int_equal(t.rows[1].kind, CSV_F64);
	assert_true(t.rows[1].value == 0.123456789);
	assert_string_equal(t.rows[2].comm, "line\nbreak");
	assert_string_equal(t.rows[2].le, "+Inf");
	assert_true(t.rows[2].value == 7);
	csv_table_free(&t);
	fclose(f);
	free(buf);
}

/* Each case: input after the preamble, and the "line N: reason" it must produce. */
static void rejects(void **state)
{
	/* version 1 files are still read: its rows have no vm column */
	static const char *pre = CSV_MAGIC_V1 "\n# kernel=x\n" CSV_HEADER_V1 "\n";
	static const struct {
		const char *body;
		const char *err;
	} cases[] = {
		{"1,2,c,0,bpf,m,,1\n1,2,c,0,bpf,m,,x\n", "line 5: value 'x' is not a number"},
		{"1,2,c,0,bpf,m,,1,9\n", "line 4: expected 8 fields, found 9"},
		{"1,2,c,0,bpf,m,,1,9,10,11\n", "line 4: more than 10 fields"},
		{"1,2,c,0,bpf,m,1\n", "line 4: expected 8 fields, found 7"},
		{"1,2,c,v,bpf,m,,1\n",
		 "line 4: vcpu 'v' is neither empty nor a non-negative integer"},
		{"1,-2,c,0,bpf,m,,1\n", "line 4: pid '-2' is not a non-negative integer"},
		{"x,2,c,0,bpf,m,,1\n", "line 4: ts 'x' is not a non-negative number"},
		{"1,2,c,0,,m,,1\n", "line 4: source is empty"},
		{"1,2,c,0,bpf,,,1\n", "line 4: metric is empty"},
		{"1,2,c,0,bpf,m,big,1\n", "line 4: le 'big' is neither empty, a number nor +Inf"},
		/* a stack frame is text in slow_fault_stack rows only, and never empty */
		{"1,2,c,0,bpf,slow_fault_stack,schedule+0x27,0\n",
		 "line 4: le 'schedule+0x27' is neither empty, a number nor +Inf"},
		{"1,2,c,0,slow,slow_fault_ns,schedule+0x27,0\n",
		 "line 4: le 'schedule+0x27' is neither empty, a number nor +Inf"},
		{"1,2,c,0,slow,slow_fault_stack,,0\n",
		 "line 4: slow_fault_stack without its frame (le is empty)"},
		{"1,2,\"c,0,bpf,m,,1\n", "line 4: unterminated quoted field"},
		{"1,2,\"c\"x,0,bpf,m,,1\n", "line 4: text after a closing quote"},
		{"1,2,c\"d,0,bpf,m,,1\n", "line 4: quote inside an unquoted field"},
		{"1,2,c,0,bpf,m,,1\n\n", "line 5: expected 8 fields, found 1"},
		{"1,2,c,0,bpf,m,,18446744073709551616\n",
		 "line 4: value '18446744073709551616' is beyond 2^64 - 1"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char doc[512], err[256] = "";
		struct csv_table t;
		FILE *f;

		snprintf(doc, sizeof(doc), "%s%s", pre, cases[i].body);
		f = fmemopen(doc, strlen(doc), "r");
		assert_int_equal(csv_read_stream(f, &t, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, cases[i].err);
		fclose(f);
	}
}

/* 2^53 + 1 is the first integer a double cannot hold: it must survive a read. */
static void integers_stay_exact(void **state)
{
	static const char doc[] = CSV_MAGIC "\n# tool=test\n" CSV_HEADER "\n"
					    "1,2,c,0,bpf,faults,,9007199254740993,web-1,1\n"
					    "1,2,c,0,bpf,faults,,0,,\n";
	struct csv_table t;
	char err[256];
	FILE *f = fmemopen((void *)doc, strlen(doc), "r");

	(void)state;
	assert_int_equal(csv_read_stream(f, &t, err, sizeof(err)), 0);
	assert_int_equal(t.rows[0].kind, CSV_U64);
	assert_true(t.rows[0].u64 == 9007199254740993ULL);
	assert_true(t.rows[1].u64 == 0);
	csv_table_free(&t);
	fclose(f);
}

/* Versions 2 and 1 are still read: every process had one VM, kvmmmu's own rows none. */
static void reads_older_versions(void **state)
{
	static const char *const docs[] = {
		CSV_MAGIC_V2 "\n" CSV_HEADER_V2
			     "\n1,2,c,0,bpf,faults,,5,web-1\n1,0,k,,bpf,drops,,0,\n",
		CSV_MAGIC_V1 "\n" CSV_HEADER_V1 "\n1,2,c,0,bpf,faults,,5\n1,0,k,,bpf,drops,,0\n",
	};

	(void)state;
	for (int v = 0; v < 2; v++) {
		struct csv_table t;
		char err[256] = "";
		FILE *f = fmemopen((void *)docs[v], strlen(docs[v]), "r");

		assert_int_equal(csv_read_stream(f, &t, err, sizeof(err)), 0);
		assert_int_equal(t.version, 2 - v);
		assert_int_equal(t.n_rows, 2);
		assert_int_equal(t.rows[0].vm_index, 1);
		assert_int_equal(t.rows[1].vm_index, 0);
		csv_table_free(&t);
		fclose(f);
	}
}

static void rejects_preamble(void **state)
{
	static const struct {
		const char *doc;
		const char *err;
	} cases[] = {
		{"ts,pid\n", "line 1: not a kvmmmu CSV file (expected '# kvmmmu-csv 3')"},
		{"# kvmmmu-csv 4\n",
		 "line 1: unsupported format version '4' (this reader knows 1, 2 and 3)"},
		{CSV_MAGIC "\n# a=b\n" CSV_HEADER_V1 "\n",
		 "line 3: expected header '" CSV_HEADER "'"},
		{CSV_MAGIC_V1 "\n" CSV_HEADER "\n", "line 2: expected header '" CSV_HEADER_V1 "'"},
		{CSV_MAGIC "\n" CSV_HEADER "\n1,2,c,0,bpf,m,,1,vm\n",
		 "line 3: expected 10 fields, found 9"},
		{CSV_MAGIC_V2 "\n" CSV_HEADER "\n", "line 2: expected header '" CSV_HEADER_V2 "'"},
		{CSV_MAGIC "\n" CSV_HEADER "\n1,2,c,0,bpf,m,,1,vm,0\n",
		 "line 3: vm_index '0' is neither empty nor a positive integer"},
		{CSV_MAGIC "\n" CSV_HEADER "\n1,2,c,0,bpf,m,,1,vm,-1\n",
		 "line 3: vm_index '-1' is neither empty nor a positive integer"},
		{CSV_MAGIC "\n" CSV_HEADER "\n1,2,c,0,bpf,m,,1,vm,2x\n",
		 "line 3: vm_index '2x' is neither empty nor a positive integer"},
		{CSV_MAGIC "\n# novalue\n", "line 2: metadata line is not '# key=value'"},
		{CSV_MAGIC "\n# a=b\nts,pid\n", "line 3: expected header '" CSV_HEADER "'"},
		{CSV_MAGIC "\n# a=b\n", "line 2: missing header line '" CSV_HEADER "'"},
		{"", "line 1: not a kvmmmu CSV file (expected '# kvmmmu-csv 3')"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char doc[256], err[256] = "";
		struct csv_table t;
		FILE *f;

		snprintf(doc, sizeof(doc), "%s", cases[i].doc);
		/* fmemopen() refuses a zero-length buffer */
		f = *doc ? fmemopen(doc, strlen(doc), "r") : fopen("/dev/null", "r");
		assert_int_equal(csv_read_stream(f, &t, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, cases[i].err);
		fclose(f);
	}
}

static void crlf_and_no_final_newline(void **state)
{
	char doc[] = CSV_MAGIC_V1 "\r\n# k=v\r\n" CSV_HEADER_V1
				  "\r\n1,2,c,,bpf,m,1.5,3\r\n1,2,c,,bpf,m,,4";
	struct csv_table t;
	char err[128];
	FILE *f = fmemopen(doc, strlen(doc), "r");

	(void)state;
	assert_int_equal(csv_read_stream(f, &t, err, sizeof(err)), 0);
	assert_int_equal(t.n_rows, 2);
	assert_string_equal(t.rows[0].le, "1.5");
	assert_true(t.rows[1].value == 4);
	assert_string_equal(csv_table_meta(&t, "k"), "v");
	csv_table_free(&t);
	fclose(f);
}

/* What no text file holds, refused as it arrives: a NUL byte, a line without end. */
static void rejects_binary_and_endless(void **state)
{
	static const char nul[] = CSV_MAGIC_V1 "\n" CSV_HEADER_V1 "\n1,2,c\0d,0,bpf,m,,1\n";
	size_t len = 200000;
	char err[256] = "", *endless = malloc(len);
	struct csv_table t;
	FILE *f;

	(void)state;
	f = fmemopen((void *)nul, sizeof(nul) - 1, "r");
	assert_int_equal(csv_read_stream(f, &t, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 3: a NUL byte (not a text file)");
	fclose(f);
	assert_non_null(endless);
	memset(endless, 'y', len);
	f = fmemopen(endless, len, "r");
	assert_int_equal(csv_read_stream(f, &t, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: longer than 65536 bytes");
	fclose(f);
	free(endless);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(rejects_binary_and_endless),
		cmocka_unit_test(rejects),
		cmocka_unit_test(rejects_preamble),
		cmocka_unit_test(reads_older_versions),
		cmocka_unit_test(integers_stay_exact),
		cmocka_unit_test(full_device_refused_at_open),
		cmocka_unit_test(crlf_and_no_final_newline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
