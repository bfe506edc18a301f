// SPDX-License-Identifier: GPL-2.0
/*
 * A cell of kernel memory for bpfscenarios: an array map's value, whose
 * bytes user space writes, and whose address `where` tells. Passed as a
 * struct kvm_page_fault or an SPTE pointer, it is what the faults object's
 * bpf_probe_read_kernel() reads: events with the fault fields a test needs.
 * (Storing a pointer where user space reads it needs CAP_PERFMON: root.)
 */
#include "kvmmmu_core.h"
#include <bpf/bpf_helpers.h>
#include "kcell.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kcell);
} cells SEC(".maps");

__u64 cell_addr;

SEC("raw_tp")
int where(void *ctx)
{
	__u32 zero = 0;
	struct kcell *c = bpf_map_lookup_elem(&cells, &zero);

	if (c)
		cell_addr = (__u64)c;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
