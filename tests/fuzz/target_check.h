/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_FUZZ_TARGET_CHECK_H
#define KVMMMU_FUZZ_TARGET_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* Aborts (a finding for the fuzzer, a failure for the replay) when COND does not hold. */
#define TARGET_CHECK(cond)                                                                         \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
