// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "sysinfo.h"
#include "vm_stats_fds.h"

static int dup_fd(int pidfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

static bool have_vcpu(const struct vm_stats *v, int id)
{
	for (size_t i = 0; i < v->n_vcpus; i++)
		if (v->vcpus[i].vcpu == id)
			return true;
	return false;
}

static int add_vcpu(struct vm_stats *v, int pidfd, int fd, int id)
{
	struct vcpu_stats *vs;
	int mine = dup_fd(pidfd, fd), err;

	if (mine < 0)
		return -errno;
	vs = realloc(v->vcpus, (v->n_vcpus + 1) * sizeof(*vs));
	if (!vs) {
		close(mine);
		return -ENOMEM;
	}
	v->vcpus = vs;
	vs = &v->vcpus[v->n_vcpus];
	memset(vs, 0, sizeof(*vs));
	vs->vcpu = id;
	err = kvm_stats_open(&vs->stats, mine);
	if (err)
		return err;
	/* one set of names for the VM's vCPUs: renderers find a statistic by pointer */
	if (v->n_vcpus)
		kvm_stats_share_descs(&vs->stats, &v->vcpus[0].stats);
	if (!v->from_zero)
		vs->baseline = kvm_stats_values_dup(&vs->stats);
	v->n_vcpus++;
	return 0;
}

static int add_vm(struct vm_stats *v, int pidfd, int fd)
{
	int mine = dup_fd(pidfd, fd), err;

	if (mine < 0)
		return -errno;
	err = kvm_stats_open(&v->vm, mine);
	if (err)
		return err;
	v->have_vm = true;
	if (!v->from_zero)
		v->vm_baseline = kvm_stats_values_dup(&v->vm);
	return 0;
}

/*
 * KVM names a VM's debugfs directory after its creator and the VM's fd
 * there: PID-FD. debugfs is mounted if it is not (as tracefs is for tracing).
 */
static int add_debugfs(struct vm_stats *v, int vm_fd)
{
	static const char root[] = "/sys/kernel/debug";
	char dir[PATH_MAX];
	struct stat st;
	int err;

	snprintf(dir, sizeof(dir), "%s/kvm", root);
	if (stat(dir, &st) && mount("debugfs", root, "debugfs", 0, NULL))
		return -EXDEV;
	snprintf(dir, sizeof(dir), "%s/kvm/%d-%d", root, v->pid, vm_fd);
	err = kvm_stats_open_debugfs(&v->vm, dir);
	if (err)
		return -EXDEV;
	v->have_vm = true;
	v->vcpu_sums = true;
	if (!v->from_zero)
		v->vm_baseline = kvm_stats_values_dup(&v->vm);
	return 0;
}

int vm_stats_update(struct vm_stats *v, int pid, bool from_zero)
{
	char path[64], target[64];
	int pidfd, err = -ENOENT, vm_fd = -1;
	struct dirent *e;
	DIR *d;

	if (v->pid != pid) {
		memset(v, 0, sizeof(*v));
		v->pid = pid;
		v->from_zero = from_zero;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		err = -errno;
		closedir(d);
		return err;
	}
	v->vmm_refs = 0;
	while ((e = readdir(d))) {
		ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		int fd = atoi(e->d_name), id, r = 0;

		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, "anon_inode:kvm-vm-stats") && !v->have_vm)
			r = add_vm(v, pidfd, fd);
		else if (sscanf(target, "anon_inode:kvm-vcpu-stats:%d", &id) == 1 &&
			 !have_vcpu(v, id) && v->n_vcpus < VM_STATS_MAX_VCPUS && !v->vcpu_sums)
			r = add_vcpu(v, pidfd, fd, id);
		else if (!strncmp(target, "anon_inode:kvm-vm", 17) ||
			 !strncmp(target, "anon_inode:kvm-vcpu:", 20)) {
			if (!strcmp(target, "anon_inode:kvm-vm") && vm_fd < 0)
				vm_fd = fd;
			if (strcmp(target, "anon_inode:kvm-vm-stats"))
				v->vmm_refs++;
			r = -EXDEV; /* a VM without stats fds: see the header */
		} else
			continue;
		/* one readable VM or vCPU is enough to call it a success */
		if (!r || err == -ENOENT)
			err = r;
	}
	close(pidfd);
	closedir(d);
	if (!v->have_vm && !v->n_vcpus && err == -EXDEV && vm_fd >= 0)
		err = add_debugfs(v, vm_fd);
	/*
	 * Its VM is gone, and our fds alone keep it: let it go once that has
	 * lasted, not at once. A VMM that is exiting is gone within
	 * milliseconds and frozen then; closing our fds now would run KVM's
	 * teardown of the VM in this thread, while other short VMs start.
	 */
	if (v->vmm_refs || v->vcpu_sums || !(v->have_vm || v->n_vcpus))
		v->refs_gone_at = 0;
	else if (!v->refs_gone_at)
		v->refs_gone_at = sysinfo_monotonic();
	else if (sysinfo_monotonic() - v->refs_gone_at >= VM_STATS_RELEASE_S)
		vm_stats_freeze(v);
	return v->have_vm || v->n_vcpus ? 0 : err;
}

int vm_stats_refresh(struct vm_stats *v)
{
	int err = 0;

	if (v->frozen)
		return 0;
	if (v->have_vm)
		err = kvm_stats_refresh(&v->vm);
	for (size_t i = 0; i < v->n_vcpus && !err; i++)
		err = kvm_stats_refresh(&v->vcpus[i].stats);
	v->stale = err != 0;
	return err;
}

int vm_stats_rebase(struct vm_stats *v)
{
	int err = vm_stats_refresh(v);

	if (err)
		return err;
	if (v->have_vm) {
		free(v->vm_baseline);
		v->vm_baseline = kvm_stats_values_dup(&v->vm);
	}
	for (size_t i = 0; i < v->n_vcpus; i++) {
		free(v->vcpus[i].baseline);
		v->vcpus[i].baseline = kvm_stats_values_dup(&v->vcpus[i].stats);
	}
	v->from_zero = false;
	return 0;
}

void vm_stats_freeze(struct vm_stats *v)
{
	if (v->frozen)
		return;
	vm_stats_refresh(v);
	if (v->have_vm && v->vm.fd >= 0) {
		close(v->vm.fd);
		v->vm.fd = -1;
	}
	for (size_t i = 0; i < v->n_vcpus; i++) {
		if (v->vcpus[i].stats.fd >= 0) {
			close(v->vcpus[i].stats.fd);
			v->vcpus[i].stats.fd = -1;
		}
	}
	v->frozen = true;
}
