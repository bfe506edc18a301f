// SPDX-License-Identifier: GPL-2.0
/* kallsyms lines as kvmmmu reads them: text symbols only, exact names, compiler clones told apart.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel_symbols.h"
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

/* --stack's frames: the text symbol at or below an address, with its offset and module */
static void names_stack_frames(void **state)
{
	struct kernel_symbols *ks = kernel_symbols_load(path);
	char buf[128];

	(void)state;
	assert_non_null(ks);
	assert_true(kernel_symbols_name(ks, 0xffffffffc0a1b2d0ULL, buf, sizeof(buf)));
	assert_string_equal(buf, "direct_page_fault+0x10 [kvm]");
	assert_true(kernel_symbols_name(ks, 0xffffffffc0a1c000ULL, buf, sizeof(buf)));
	assert_string_equal(buf, "kvm_mmu_page_fault+0x0 [kvm]");
	/* a data symbol is no function: the text before it goes on */
	assert_true(kernel_symbols_name(ks, 0xffffffff810a2010ULL, buf, sizeof(buf)));
	assert_string_equal(buf, "fast_page_fault.isra.0+0x4f0");
	/* the malformed lines are skipped, a space-separated module is no module */
	assert_true(kernel_symbols_name(ks, 0xffffffffc0a20004ULL, buf, sizeof(buf)));
	assert_string_equal(buf, "kvm_tdp_page_fault+0x4");
	assert_false(kernel_symbols_name(ks, 0xffffffff80000000ULL, buf, sizeof(buf)));
	assert_string_equal(buf, "0xffffffff80000000");
	kernel_symbols_free(ks);
	/* no table (kallsyms unreadable): bare addresses */
	assert_false(kernel_symbols_name(NULL, 0x1234, buf, sizeof(buf)));
	assert_string_equal(buf, "0x1234");
}

/* kptr_restrict: every address reads 0, and no frame could be named */
static void refuses_hidden_addresses(void **state)
{
	static const char hidden[] =
		"0000000000000000 T _text\n0000000000000000 t direct_page_fault\t[kvm]\n";
	char p[] = "/tmp/kvmmmu-ksyms-hidden-XXXXXX";
	int fd = mkstemp(p);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, hidden, sizeof(hidden) - 1), sizeof(hidden) - 1);
	close(fd);
	errno = 0;
	assert_null(kernel_symbols_load(p));
	assert_int_equal(errno, ENOENT);
	unlink(p);
	assert_null(kernel_symbols_load("/nonexistent/kallsyms"));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_text_symbols),
		cmocka_unit_test(tells_clones_and_data_apart),
		cmocka_unit_test(names_stack_frames),
		cmocka_unit_test(refuses_hidden_addresses),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
