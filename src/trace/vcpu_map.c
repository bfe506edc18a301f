// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procs.h"
#include "vcpu_map.h"
#include "array.h"

/* vCPU id named by /proc/PID/fd/FD ("anon_inode:kvm-vcpu:N"), or -1. */
static int fd_vcpu(const char *proc_root, int pid, long fd)
{
	char link[PATH_MAX], target[128];
	ssize_t n;
	int id;

	snprintf(link, sizeof(link), "%s/%d/fd/%ld", proc_root, pid, fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return -1;
	target[n] = '\0';
	if (sscanf(target, "anon_inode:kvm-vcpu:%d", &id) != 1)
		return -1;
	return id;
}

int vcpu_fds(const char *proc_root, int pid, int *ids, size_t max)
{
	char path[PATH_MAX];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/fd", proc_root, pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)) && n < max) {
		int id;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		id = fd_vcpu(proc_root, pid, atol(e->d_name));
		if (id >= 0)
			ids[n++] = id;
	}
	closedir(d);
	return (int)n;
}

/* "16 0xb 0xae80 ..." is ioctl(11, KVM_RUN); "running" or other calls say nothing. */
static int syscall_vcpu(const char *proc_root, int pid, int tid)
{
	char path[PATH_MAX], line[512];
	unsigned long nr, fd, req;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/task/%d/syscall", proc_root, pid, tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%lu %lx %lx", &nr, &fd, &req) != 3) {
		fclose(f);
		return -1;
	}
	fclose(f);
	if (nr != SYS_ioctl || req != KVM_RUN)
		return -1;
	return fd_vcpu(proc_root, pid, (long)fd);
}

/* PREFIX, decimal digits, SUFFIX, and nothing else: the digits' value, or -1. */
static int id_between(const char *comm, const char *prefix, const char *suffix)
{
	size_t plen = strlen(prefix), digits;
	long id;

	if (strncmp(comm, prefix, plen))
		return -1;
	comm += plen;
	digits = strspn(comm, "0123456789");
	if (!digits || digits > 6 || strcmp(comm + digits, suffix))
		return -1;
	id = strtol(comm, NULL, 10);
	return (int)id;
}

int vcpu_from_thread_name(const char *comm)
{
	static const struct {
		const char *prefix, *suffix;
	} names[] = {
		{"CPU ", "/KVM"}, /* QEMU */
		{"fc_vcpu ", ""}, /* Firecracker */
		{"vcpu", ""},	  /* cloud-hypervisor */
		{"crosvm_vcpu", ""},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int id = id_between(comm, names[i].prefix, names[i].suffix);

		if (id >= 0)
			return id;
	}
	return -1;
}

static void record(struct vcpu_map *m, int pid, int tid, int vcpu, enum vcpu_source source)
{
	struct vcpu_map_entry *e;

	for (size_t i = 0; i < m->n; i++) {
		if (m->e[i].pid == pid && m->e[i].tid == tid) {
			/* a KVM_RUN sighting beats a name */
			if (source == VCPU_FROM_SYSCALL || m->e[i].source == VCPU_FROM_COMM) {
				m->e[i].vcpu = vcpu;
				m->e[i].source = source;
			}
			return;
		}
	}
	e = array_grow(m->e, m->n + 1, &m->cap, sizeof(*e));
	if (!e)
		return;
	m->e = e;
	m->e[m->n++] = (struct vcpu_map_entry){pid, tid, vcpu, source};
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/*
 * QEMU names its vCPU threads by cpu_index ("CPU N/KVM"), but creates each
 * vCPU in KVM with its APIC id, which skips values when cores or threads per
 * socket are not a power of two (-smp 6,cores=3: APIC ids 0-2 and 4-6). The
 * APIC id grows with the index, and QEMU creates vCPUs in index order, so
 * index N is the Nth smallest vCPU id the process has created (IDS, sorted).
 */
static int qemu_vcpu(int index, const int *ids, size_t n)
{
	if (!n)
		return index;
	return (size_t)index < n ? ids[index] : -1;
}

int vcpu_map_scan(struct vcpu_map *m, const char *proc_root, int pid)
{
	char path[PATH_MAX];
	struct dirent *e;
	int ids[VCPU_MAP_MAX_IDS], n_ids;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/task", proc_root, pid);
	d = opendir(path);
	if (!d)
		return -errno;
	n_ids = vcpu_fds(proc_root, pid, ids, VCPU_MAP_MAX_IDS);
	if (n_ids < 0)
		n_ids = 0;
	qsort(ids, (size_t)n_ids, sizeof(ids[0]), cmp_int);
	while ((e = readdir(d))) {
		char comm[64];
		int tid, vcpu, index;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		tid = atoi(e->d_name);
		proc_comm(proc_root, pid, tid, comm, sizeof(comm));
		/*
		 * KVM's own workers (kvm-nx-lpage-recovery) live in the VMM's thread
		 * group and show the KVM_RUN of the vCPU they were forked from.
		 */
		if (!strncmp(comm, "kvm-", 4))
			continue;
		vcpu = syscall_vcpu(proc_root, pid, tid);
		if (vcpu >= 0) {
			record(m, pid, tid, vcpu, VCPU_FROM_SYSCALL);
			continue;
		}
		index = id_between(comm, "CPU ", "/KVM");
		vcpu = index >= 0 ? qemu_vcpu(index, ids, (size_t)n_ids)
				  : vcpu_from_thread_name(comm);
		if (vcpu >= 0)
			record(m, pid, tid, vcpu, VCPU_FROM_COMM);
	}
	closedir(d);
	return 0;
}

int vcpu_map_lookup(const struct vcpu_map *m, int pid, int tid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].pid == pid && m->e[i].tid == tid)
			return m->e[i].vcpu;
	return -1;
}

void vcpu_map_forget(struct vcpu_map *m, int pid)
{
	size_t kept = 0;

	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].pid != pid)
			m->e[kept++] = m->e[i];
	m->n = kept;
}

void vcpu_map_free(struct vcpu_map *m)
{
	free(m->e);
	m->e = NULL;
	m->n = 0;
	m->cap = 0;
}
