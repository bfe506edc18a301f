// SPDX-License-Identifier: GPL-2.0
/*
 * A fault's access kind from what each probe sees (include/kvmmmu.h): an x86
 * page-fault error code (kvm_mmu_page_fault's, SVM's NPF exits, #PF
 * intercepts, the done event's) and a VMX EPT violation's exit
 * qualification (what kvm:kvm_page_fault carries on VMX). The bits are the
 * architecture's (SDM vol. 3 4.7 and table 28-7; APM vol. 2 15.25.6).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/types.h>

#include "kvmmmu.h"

#define WRITE (KVMMMU_ACC_KNOWN | KVMMMU_ACC_WRITE)
#define FETCH (KVMMMU_ACC_KNOWN | KVMMMU_ACC_FETCH)
#define PRESENT KVMMMU_ACC_PRESENT

static void pferr_bits(void **state)
{
	(void)state;
	/* a read of an absent page: nothing set but "known" */
	assert_int_equal(kvmmmu_access_from_pferr(0), KVMMMU_ACC_KNOWN);
	/* W/R (bit 1), P (bit 0), I/D (bit 4); U/S (bit 2) and RSVD (bit 3) say nothing of it */
	assert_int_equal(kvmmmu_access_from_pferr(0x2), WRITE);
	assert_int_equal(kvmmmu_access_from_pferr(0x3), WRITE | PRESENT);
	assert_int_equal(kvmmmu_access_from_pferr(0x10), FETCH);
	assert_int_equal(kvmmmu_access_from_pferr(0x11 | 0x4), FETCH | PRESENT);
	assert_int_equal(kvmmmu_access_from_pferr(0x4 | 0x8 | 0x1), KVMMMU_ACC_KNOWN | PRESENT);
	/* RSVD alone: VMX's EPT misconfiguration, as KVM passes it on: not known */
	assert_int_equal(kvmmmu_access_from_pferr(0x8), 0);
	/* SVM's NPF sets bit 32 or 33 (final GPA, or a guest page-table walk): ignored */
	assert_int_equal(kvmmmu_access_from_pferr((1ULL << 32) | 0x6), WRITE);
}

static void ept_qualification_bits(void **state)
{
	(void)state;
	/* bit 0 a read, bit 1 a write, bit 2 a fetch; bits 3-5 what the entry allowed */
	assert_int_equal(kvmmmu_access_from_ept_qual(0x1), KVMMMU_ACC_KNOWN);
	assert_int_equal(kvmmmu_access_from_ept_qual(0x2), WRITE);
	assert_int_equal(kvmmmu_access_from_ept_qual(0x4), FETCH);
	/* readable, not writable: a write to a write-protected page */
	assert_int_equal(kvmmmu_access_from_ept_qual(0x2 | 0x8), WRITE | PRESENT);
	/* readable and writable, not executable: a fetch from an NX page */
	assert_int_equal(kvmmmu_access_from_ept_qual(0x4 | 0x18), FETCH | PRESENT);
	/* bit 7 (a GVA), bit 8 (its translation): ignored */
	assert_int_equal(kvmmmu_access_from_ept_qual(0x181), KVMMMU_ACC_KNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pferr_bits),
		cmocka_unit_test(ept_qualification_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
