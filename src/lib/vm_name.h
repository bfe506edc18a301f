/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_VM_NAME_H
#define KVMMMU_VM_NAME_H

#include <stddef.h>

/*
 * A VM's name the way its users know it, found once per process from its
 * command line and cgroup: QEMU's -name (libvirt passes the domain name
 * there; KubeVirt's domains are NAMESPACE_NAME), libvirt's machine scope,
 * Firecracker's --id; else the process name.
 */
struct vm_name {
	char *name;	  /* never NULL after a successful parse */
	char *namespace;  /* KubeVirt's namespace, or NULL */
	const char *from; /* where the name came from, for -v and the docs */
};

/*
 * CMDLINE: LEN bytes of NUL-separated arguments (/proc/PID/cmdline);
 * CGROUP: /proc/PID/cgroup's text, or NULL; COMM: the process name, the
 * fallback. 0, or -ENOMEM.
 */
int vm_name_parse(const char *cmdline, size_t len, const char *cgroup, const char *comm,
		  struct vm_name *out);
/* The same from PROC_ROOT/PID (COMM the fallback); 0, or -errno. */
int vm_name_read(const char *proc_root, int pid, const char *comm, struct vm_name *out);
/* NAME with bytes that are not printable ASCII as \xNN and backslashes doubled, malloc()ed. */
char *vm_name_escape(const char *name);
void vm_name_free(struct vm_name *v);

#endif
