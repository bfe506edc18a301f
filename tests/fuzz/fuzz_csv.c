// SPDX-License-Identifier: GPL-2.0
/* libFuzzer entry for the CSV reader: make fuzz (clang -fsanitize=fuzzer,address,undefined). */
#include "csv_target.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return csv_target(data, size);
}
