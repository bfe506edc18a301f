/* SPDX-License-Identifier: GPL-2.0 */
/* Finding the VMs to trace: a PID, or a name matched the way pgrep matches it. */
#ifndef KVMMMU_PROCS_H
#define KVMMMU_PROCS_H

#include <stdbool.h>
#include <stddef.h>

/* A -p argument: a PID, or an extended regex searched in the 15-character comm. */
struct proc_spec {
	char *text;
	int pid; /* > 0 when the spec is a PID */
	void *regex;
};

/* The largest PID a spec takes: what a pid_t holds (the kernel's own limit is lower). */
#define PROC_SPEC_PID_MAX 2147483647
/*
 * TEXT as a spec: digits are a PID (from 1 to PROC_SPEC_PID_MAX), and "-1"
 * or "0" no PID (-ERANGE), not a name; anything else an extended regex
 * (-EINVAL when it is none, as when TEXT is empty). Free with proc_spec_free().
 */
int proc_spec_init(struct proc_spec *s, const char *text);
/* Why proc_spec_init() refused TEXT, into BUF: "not a valid PID (a PID is from 1 to ...)". */
void proc_spec_why(const char *text, char *buf, size_t len);
void proc_spec_free(struct proc_spec *s);
bool proc_spec_matches(const struct proc_spec *s, int pid, const char *comm);
/* Whether one of N SPECS matches PID by COMM, or else by its VM's name (read from PROC_ROOT). */
bool procs_spec_any(const struct proc_spec *specs, size_t n, int pid, const char *comm,
		    const char *proc_root);

/*
 * Appends to PIDS (capacity MAX) every process under PROC_ROOT ("/proc")
 * matching any of the N specs, except SELF. Returns how many matched, or -errno.
 */
int procs_find(const char *proc_root, const struct proc_spec *specs, size_t n, int self, int *pids,
	       size_t max);
/* The same, of processes with a KVM VM open; with no specs (N 0), every such process. */
int procs_find_vmms(const char *proc_root, const struct proc_spec *specs, size_t n, int self,
		    int *pids, size_t max);
/* The comm of PID (or of TID when tid > 0), "" when gone. */
void proc_comm(const char *proc_root, int pid, int tid, char *buf, size_t len);
/* Whether PID has a KVM VM open (an fd named anon_inode:kvm-vm). */
bool proc_is_vmm(const char *proc_root, int pid);
/* 1 when PID has a VM or vCPU fd open, 0 when it has none, -errno when its fds cannot be read. */
int proc_has_vm(const char *proc_root, int pid);

#endif
