// SPDX-License-Identifier: GPL-2.0
/* kallsyms lines as kvmmmu reads them: text symbols only, exact names, compiler clones told apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "ksyms.h"

/* lines of a Debian 6.12 /proc/kallsyms (the addresses as root reads them), and odd ones */
static const char sample[] = "ffffffff81000000 T _text\n"
			     "ffffffff810a1b20 t fast_page_fault.isra.0\n"
			     "ffffffff810a2000 d kvm_data_only\n"
			     "ffffffffc0a1b2c0 t direct_page_fault\t[kvm]\n"
			     "ffffffffc0a1c000 T kvm_mmu_page_fault\t[kvm]\n"
			     "ffffffffc0a1d000 t paging64_page_fault.constprop.0\t[kvm]\n"
			     "ffffffffc0a1e000 t\n"
			     "garbage\n"
			     "ffffffffc0a1f000 tt not_a_type\n"
			     "ffffffffc0a20000 t kvm_tdp_page_fault [kvm]\n";

static char path[] = "/tmp/kvmmmu-ksyms-XXXXXX";

static int setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	if (fd < 0 || write(fd, sample, sizeof(sample) - 1) != (ssize_t)(sizeof(sample) - 1))
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void finds_text_symbols(void **state)
{
	(void)state;
	assert_int_equal(ksym_lookup(path, "direct_page_fault"), KSYM_PRESENT);
	assert_int_equal(ksym_lookup(path, "kvm_mmu_page_fault"), KSYM_PRESENT);
	assert_int_equal(ksym_lookup(path, "kvm_tdp_page_fault"), KSYM_PRESENT);
	assert_int_equal(ksym_lookup(path, "_text"), KSYM_PRESENT);
}

static void tells_clones_and_data_apart(void **state)
{
	(void)state;
	assert_int_equal(ksym_lookup(path, "fast_page_fault"), KSYM_ONLY_CLONE);
	assert_int_equal(ksym_lookup(path, "paging64_page_fault"), KSYM_ONLY_CLONE);
	assert_int_equal(ksym_lookup(path, "kvm_data_only"), KSYM_ABSENT); /* data, not text */
	assert_int_equal(ksym_lookup(path, "direct_page"), KSYM_ABSENT);   /* a prefix */
	assert_int_equal(ksym_lookup(path, "not_a_type"), KSYM_ABSENT);
	assert_int_equal(ksym_lookup(path, "garbage"), KSYM_ABSENT);
	assert_int_equal(ksym_lookup("/nonexistent/kallsyms", "_text"), KSYM_ABSENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_text_symbols),
		cmocka_unit_test(tells_clones_and_data_apart),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
