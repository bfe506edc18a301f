// SPDX-License-Identifier: GPL-2.0
/* libFuzzer entry for kvmmmu-diff's loading and derivation: make fuzz. */
#include "diff_target.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return diff_target(data, size);
}
