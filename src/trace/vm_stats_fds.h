/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's own statistics for any VM, not only ours, through the VMM's binary
 * stats fds (anon_inode:kvm-vm-stats, anon_inode:kvm-vcpu-stats:N),
 * duplicated with pidfd_getfd() (root, Linux 5.6+). We cannot make new ones:
 * KVM refuses every ioctl, KVM_GET_STATS_FD included, from a process other
 * than the VM's creator (kvm->mm != current->mm gives -EIO), so a VMM must
 * have opened them: kvmmmu-load does, QEMU does once asked for statistics
 * per QMP query-stats, but QEMU 7.2 closes them again). Reading a stats fd has
 * no such check, and the fds keep the VM alive for reading, so the final
 * figures are there after the VMM exits.
 *
 * A VMM that holds none leaves KVM's debugfs directory of the VM (root,
 * debugfs not locked down): its VM statistics and its vCPU statistics summed
 * over the vCPUs, so VM-wide figures only, and read while the VM exists
 * (the last reading before it exits is the final one).
 */
#ifndef KVMMMU_VM_STATS_FDS_H
#define KVMMMU_VM_STATS_FDS_H

#include <stdbool.h>

#include "vm_stats.h"

/* How long a live VMM holds none of its VM's fds before ours go too (seconds). */
#define VM_STATS_RELEASE_S 1.0

/*
 * Opens (or, called again, extends with new vCPUs) the stats of PID's VM.
 * FROM_ZERO: count from zero rather than from the values now. Once the VMM
 * has held none of its VM's fds for VM_STATS_RELEASE_S (it let the VM go
 * and lives on), the final values are read and our fds closed
 * (vm_stats_freeze()): a duplicated stats fd holds the whole VM. Returns -errno: -ENOENT no VM fds,
 * -EXDEV a VM without stats fds nor a readable debugfs directory, -EPERM not allowed to take its
 * fds.
 */
int vm_stats_update(struct vm_stats *v, int pid, bool from_zero);
int vm_stats_refresh(struct vm_stats *v);
/* Counts from now on: the current values become the baselines. */
int vm_stats_rebase(struct vm_stats *v);
/*
 * The VMM has exited: reads the final values once more and closes the fds,
 * keeping the values (a long run with VMs coming and going must not run out
 * of descriptors). Refreshing a frozen VM does nothing.
 */
void vm_stats_freeze(struct vm_stats *v);

#endif
