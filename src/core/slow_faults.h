/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmmmu-hist --slower: the faults that took at least that long, as BPF
 * reported them, each with its wall-clock time and which of its process's
 * VMs it was. Plain data: the faults source appends, a command takes them.
 */
#ifndef KVMMMU_SLOW_FAULTS_H
#define KVMMMU_SLOW_FAULTS_H

#include <stddef.h>
#include <linux/types.h>

#include "kvmmmu.h"

/* Records kept until taken: past it, the newest are dropped (and counted). */
#define SLOW_FAULTS_MAX 65536

struct slow_fault {
	struct kvmmmu_slow_fault rec;
	int vm_index; /* which of process rec.tgid's VMs (1: its first) */
	double wall;  /* seconds since the epoch */
	char vm[64];  /* its VM's name, as every other figure of it says (else its process's) */
	/*
	 * --stack: the kernel stack of its longest wait off the CPU, innermost
	 * frame first, "schedule;handle_userfault+0x1e2;..." (owned); NULL: none
	 */
	char *stack;
};

struct slow_faults {
	struct slow_fault *items;
	size_t n, cap;
	__u64 dropped; /* not kept: SLOW_FAULTS_MAX were waiting, or no memory */
};

/*
 * Appends REC, of VM VM_INDEX of its process, named VM, at WALL (seconds
 * since the epoch), with STACK (taken over: freed if not kept; may be NULL).
 */
void slow_faults_append(struct slow_faults *l, const struct kvmmmu_slow_fault *rec, int vm_index,
			const char *vm, double wall, char *stack);
/* Moves every record of FROM to the end of TO (FROM is left empty); 0 or -ENOMEM. */
int slow_faults_take(struct slow_faults *to, struct slow_faults *from);
void slow_faults_free(struct slow_faults *l);

#endif
