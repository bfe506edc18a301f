// SPDX-License-Identifier: GPL-2.0
/*
 * log_excerpt(): what a one-line load error is followed by when nothing
 * could be loaded: the last lines of the verifier's log that say what it
 * refused (not its tallies), under the program's name, and nothing more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "log.h"

/* libbpf 1.1's warnings for a program the verifier refused, as its print callback gets them */
static const char refused[] =
	"libbpf: prog 'kvm_mmu_spte_requested_btf': BPF program load failed: Permission denied\n"
	"libbpf: prog 'kvm_mmu_spte_requested_btf': -- BEGIN PROG LOAD LOG --\n"
	"0: R1=ctx() R10=fp0\n"
	"1: (79) r6 = *(u64 *)(r1 +0)\n"
	"2: (79) r5 = *(u64 *)(r6 +16)\n"
	"R5 invalid mem access 'trusted_ptr_or_null_'\n"
	"processed 3 insns (limit 1000000) max_states_per_insn 0\n"
	"-- END PROG LOAD LOG --\n"
	"libbpf: failed to load object 'faults_bpf'\n";

static void verifier_log_ends_under_its_program(void **state)
{
	char out[1024];

	(void)state;
	log_excerpt(refused, 2, out, sizeof(out));
	assert_string_equal(out, "  libbpf: prog 'kvm_mmu_spte_requested_btf': the verifier's last "
				 "words:\n"
				 "    2: (79) r5 = *(u64 *)(r6 +16)\n"
				 "    R5 invalid mem access 'trusted_ptr_or_null_'\n");
}

static void plain_warnings_keep_their_last_lines(void **state)
{
	char out[256];

	(void)state;
	log_excerpt("libbpf: map 'x': failed to create: -1\n"
		    "libbpf: failed to load object 'faults_bpf'\n",
		    4, out, sizeof(out));
	assert_string_equal(out, "  libbpf: map 'x': failed to create: -1\n");
}

static void bounded_by_the_buffer(void **state)
{
	char out[24];

	(void)state;
	memset(out, 'x', sizeof(out));
	log_excerpt(refused, 8, out, sizeof(out));
	assert_true(memchr(out, '\0', sizeof(out)) != NULL);
	log_excerpt("", 8, out, sizeof(out));
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(verifier_log_ends_under_its_program),
		cmocka_unit_test(plain_warnings_keep_their_last_lines),
		cmocka_unit_test(bounded_by_the_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
