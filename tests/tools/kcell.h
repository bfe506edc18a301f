/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel memory cell of tests/tools/kcell.bpf.c, shared with bpfscenarios. */
#ifndef KVMMMU_KCELL_H
#define KVMMMU_KCELL_H

struct kcell {
	__u8 bytes[16384]; /* room for a struct kvm_vcpu up to its stat.exits */
};

#endif
