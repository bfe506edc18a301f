// SPDX-License-Identifier: GPL-2.0
/*
 * RET_PF_* decoding: from BTF (built to match 6.1 and 6.12, and the running
 * kernel's) and tracefs; an event format's fields (the done event's).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <cmocka.h>

#include "kernel_btf.h"
#include "ret_pf.h"
#include "tracefs.h"

/* An anonymous enum among other enums, as KVM's BTF has it. */
static struct btf *btf_with(const char *const *names, int n)
{
	struct btf *b = btf__new_empty();
	int id;

	assert_non_null(b);
	id = btf__add_enum(b, "kvm_mmu_type", 4);
	assert_true(id > 0);
	assert_int_equal(btf__add_enum_value(b, "KVM_SHADOW", 0), 0);
	id = btf__add_enum(b, NULL, 4);
	assert_true(id > 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(btf__add_enum_value(b, names[i], i), 0);
	return b;
}

static void decodes_6_1_layout(void **state)
{
	static const char *const v61[] = {"RET_PF_CONTINUE", "RET_PF_RETRY", "RET_PF_EMULATE",
					  "RET_PF_INVALID",  "RET_PF_FIXED", "RET_PF_SPURIOUS"};
	struct btf *b = btf_with(v61, 6);
	struct ret_pf_table t;

	(void)state;
	assert_int_equal(ret_pf_from_btf(&t, b), 0);
	assert_int_equal(ret_pf_value(&t, "fixed"), 4);
	assert_int_equal(ret_pf_value(&t, "spurious"), 5);
	assert_int_equal(ret_pf_value(&t, "write_protected"), -1);
	assert_int_equal(t.source, RET_PF_FROM_BTF);
	ret_pf_free(&t);
	btf__free(b);
}

static void decodes_6_12_layout(void **state)
{
	static const char *const v612[] = {
		"RET_PF_CONTINUE", "RET_PF_RETRY", "RET_PF_EMULATE", "RET_PF_WRITE_PROTECTED",
		"RET_PF_INVALID",  "RET_PF_FIXED", "RET_PF_SPURIOUS"};
	struct btf *b = btf_with(v612, 7);
	struct ret_pf_table t;

	(void)state;
	assert_int_equal(ret_pf_from_btf(&t, b), 0);
	assert_int_equal(ret_pf_value(&t, "write_protected"), 3);
	assert_int_equal(ret_pf_value(&t, "fixed"), 5);
	assert_int_equal(ret_pf_value(&t, "spurious"), 6);
	assert_string_equal(t.name[0], "continue");
	ret_pf_free(&t);
	btf__free(b);
}

static void no_enumerators_is_enoent(void **state)
{
	struct btf *b = btf_with(NULL, 0);
	struct ret_pf_table t;

	(void)state;
	assert_int_equal(ret_pf_from_btf(&t, b), -ENOENT);
	btf__free(b);
}

/*
 * The running kernel: BTF's table must give the values the kernel itself put
 * into the fast_page_fault print fmt (an independent source, when readable).
 */
static void running_kernel(void **state)
{
	struct kernel_btf kb;
	struct ret_pf_table t, fmt_table;
	char *fmt;

	(void)state;
	if (kernel_btf_load(&kb)) {
		printf("SKIP: no kernel BTF\n");
		skip();
	}
	assert_int_equal(ret_pf_from_btf(&t, kernel_btf_kvm_types(&kb)), 0);
	fmt = tracefs_read_format("kvmmmu", "fast_page_fault");
	if (!fmt || ret_pf_from_format(&fmt_table, fmt)) {
		free(fmt);
		ret_pf_free(&t);
		kernel_btf_free(&kb);
		printf("SKIP: no readable kvmmmu:fast_page_fault format with the enum fix\n");
		skip();
	}
	assert_int_equal(ret_pf_value(&t, "fixed"), ret_pf_value(&fmt_table, "fixed"));
	assert_int_equal(ret_pf_value(&t, "spurious"), ret_pf_value(&fmt_table, "spurious"));
	assert_int_equal(ret_pf_value(&t, "invalid"), ret_pf_value(&fmt_table, "invalid"));
	free(fmt);
	ret_pf_free(&fmt_table);
	ret_pf_free(&t);
	kernel_btf_free(&kb);
}

static const char fixed_format[] =
	"name: fast_page_fault\n"
	"print fmt: \"vcpu %d gva %llx error_code %s sptep %p old %#llx new %llx spurious %d "
	"fixed %d\", REC->vcpu_id, REC->cr2_or_gpa, __print_flags(REC->error_code, \"|\"), "
	"REC->sptep, REC->old_spte, REC->new_spte, REC->ret == 6, REC->ret == 5\n";

static const char unfixed_format[] =
	"name: fast_page_fault\n"
	"print fmt: \"... spurious %d fixed %d\", REC->vcpu_id, REC->ret == RET_PF_SPURIOUS, "
	"REC->ret == RET_PF_FIXED\n";

static void tracefs_format(void **state)
{
	struct ret_pf_table t;

	(void)state;
	assert_int_equal(ret_pf_from_format(&t, fixed_format), 0);
	assert_int_equal(ret_pf_value(&t, "spurious"), 6);
	assert_int_equal(ret_pf_value(&t, "fixed"), 5);
	/* INVALID ("take the slow path") precedes FIXED in every layout: fast faults need it */
	assert_int_equal(ret_pf_value(&t, "invalid"), 4);
	/* where EMULATE is depends on the kernel (WRITE_PROTECTED, 6.12): not guessed */
	assert_int_equal(ret_pf_value(&t, "emulate"), -1);
	assert_int_equal(t.source, RET_PF_FROM_TRACEFS);
	assert_false(ret_pf_format_lacks_enum_fix(fixed_format));
	ret_pf_free(&t);
	assert_true(ret_pf_format_lacks_enum_fix(unfixed_format));
	assert_int_equal(ret_pf_from_format(&t, unfixed_format), -ENOENT);
	assert_int_equal(ret_pf_from_format(&t, "name: x\n"), -ENOENT);
}

/*
 * kernel-patches/ 0001's done event as tracefs shows it: the current one,
 * with the fault's goal level and fast path, and the first one without
 * them, which done-event mode must not use (kvmmmu-check: "old").
 */
#define DONE_FORMAT_HEAD                                                                           \
	"name: kvm_mmu_page_fault_done\n"                                                          \
	"ID: 1714\n"                                                                               \
	"format:\n"                                                                                \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                     \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                     \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"             \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                                 \
	"\n"                                                                                       \
	"\tfield:int vcpu_id;\toffset:8;\tsize:4;\tsigned:1;\n"                                    \
	"\tfield:gpa_t cr2_or_gpa;\toffset:16;\tsize:8;\tsigned:0;\n"                              \
	"\tfield:u64 error_code;\toffset:24;\tsize:8;\tsigned:0;\n"                                \
	"\tfield:int ret;\toffset:32;\tsize:4;\tsigned:1;\n"                                       \
	"\tfield:u64 duration_ns;\toffset:40;\tsize:8;\tsigned:0;\n"

static const char done_format[] =
	DONE_FORMAT_HEAD "\tfield:u8 goal_level;\toffset:48;\tsize:1;\tsigned:0;\n"
			 "\tfield:bool fast;\toffset:49;\tsize:1;\tsigned:0;\n"
			 "\n"
			 "print fmt: \"vcpu %d gpa %llx error_code %s ret %s goal_level %u fast %d "
			 "duration %llu ns\", REC->vcpu_id, REC->cr2_or_gpa, REC->goal_level, "
			 "REC->fast, REC->duration_ns\n";

static const char done_format_first[] =
	DONE_FORMAT_HEAD "\n"
			 "print fmt: \"vcpu %d gpa %llx error_code %s ret %s duration %llu ns\", "
			 "REC->vcpu_id, REC->cr2_or_gpa, REC->duration_ns\n";

static void format_fields(void **state)
{
	(void)state;
	assert_true(tracefs_format_has_field(done_format, "goal_level"));
	assert_true(tracefs_format_has_field(done_format, "fast"));
	assert_true(tracefs_format_has_field(done_format, "vcpu_id"));
	assert_true(tracefs_format_has_field(done_format, "common_pid"));
	assert_false(tracefs_format_has_field(done_format_first, "goal_level"));
	assert_false(tracefs_format_has_field(done_format_first, "fast"));
	assert_true(tracefs_format_has_field(done_format_first, "duration_ns"));
	/* a name in the print format, a prefix or a suffix of a field's, is no field */
	assert_false(tracefs_format_has_field(done_format, "REC"));
	assert_false(tracefs_format_has_field(done_format, "duration"));
	assert_false(tracefs_format_has_field(done_format, "ns"));
	assert_false(tracefs_format_has_field(done_format, "code"));
	assert_false(tracefs_format_has_field(done_format, "offset"));
	/* arrays ("NAME[N];") and an event with no fields */
	assert_true(tracefs_format_has_field("\tfield:char comm[16];\toffset:8;\n", "comm"));
	assert_false(tracefs_format_has_field("\tfield:char comm[16];\toffset:8;\n", "com"));
	assert_false(tracefs_format_has_field("name: x\nformat:\n", "x"));
	assert_false(tracefs_format_has_field("\tfield:int broken", "broken"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_6_1_layout),	    cmocka_unit_test(decodes_6_12_layout),
		cmocka_unit_test(no_enumerators_is_enoent), cmocka_unit_test(running_kernel),
		cmocka_unit_test(tracefs_format),	    cmocka_unit_test(format_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
