/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DIFF_VM_KEYS_H
#define KVMMMU_DIFF_VM_KEYS_H

/*
 * The names runs are joined on, one a VM of a run: its name, and "NAME #I"
 * for the I-th VM of one name. Two QEMUs without -name are both "qemu" (as
 * KVM's selftests' VMs of one process are): each keeps its own figures.
 */
#include <stddef.h>

#include "csv.h"
#include "snapshot.h"

#define VM_KEY_MAX 64 /* with its NUL; a longer name is cut, and still told apart */

struct vm_key {
	int pid, index;	  /* the VM: its process and which of the process's VMs (1: first) */
	const char *base; /* its name, else its process's */
	size_t seen;	  /* its place among those added: the snapshot's VMs first */
	char key[VM_KEY_MAX];
};

struct vm_keys {
	struct vm_key *v; /* sorted by (pid, index) */
	size_t n, cap;
};

/* Keys for SNAP's VMs and the VMs of TABLE's kvmmmu-load rows. 0 or -ENOMEM. */
int vm_keys_build(struct vm_keys *k, const struct snapshot *snap, const struct csv_table *table);
/* The key of process PID's VM INDEX (0: 1), or NULL. */
const char *vm_keys_find(const struct vm_keys *k, int pid, int index);
void vm_keys_free(struct vm_keys *k);

#endif
