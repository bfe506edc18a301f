// SPDX-License-Identifier: GPL-2.0
/*
 * Linked into the KVM selftests that the distro-kernel harness runs
 * (scripts/build-selftests.sh: -Wl,--wrap=kvm_vm_free), built against each
 * kernel's own selftests library. Just before a VM is freed, its vCPU
 * threads joined, each vCPU's pf_* counters from KVM's binary statistics
 * are appended to the file $KVMMMU_SELFTEST_STATS, one line a vCPU:
 *
 *   vcpu VM ID pf_taken N pf_fixed N ...
 *
 * VM numbers the process's VMs from 0 as they are freed. The per-vCPU
 * oracle: KVM takes a vCPU's ioctls (KVM_GET_STATS_FD among them) only from
 * the VM's own process, and its debugfs has VM-wide sums only
 * (tests/tools/kvmpin.c reads those).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm_util.h"

void __real_kvm_vm_free(struct kvm_vm *vm);

/* Appends " NAME VALUE" for each pf_* counter of the stats fd FD. */
static int print_pf(FILE *f, int fd)
{
	struct kvm_stats_header h;
	struct kvm_stats_desc *d;
	size_t len, size;
	char *descs;
	int err = 0;
	uint64_t v;

	if (pread(fd, &h, sizeof(h), 0) != sizeof(h))
		return -1;
	size = sizeof(*d) + h.name_size;
	len = size * h.num_desc;
	descs = malloc(len);
	if (!descs || pread(fd, descs, len, h.desc_offset) != (ssize_t)len) {
		free(descs);
		return -1;
	}
	for (uint32_t i = 0; i < h.num_desc && !err; i++) {
		d = (struct kvm_stats_desc *)(descs + i * size);
		if (strncmp(d->name, "pf_", 3) || d->size != 1)
			continue;
		if (pread(fd, &v, sizeof(v), h.data_offset + d->offset) != sizeof(v))
			err = -1;
		else
			fprintf(f, " %s %llu", d->name, (unsigned long long)v);
	}
	free(descs);
	return err;
}

void __wrap_kvm_vm_free(struct kvm_vm *vm)
{
	const char *path = getenv("KVMMMU_SELFTEST_STATS");
	static int n_vms;
	struct kvm_vcpu *vcpu;
	FILE *f;
	int fd;

	if (vm && path) {
		f = fopen(path, "a");
		TEST_ASSERT(f, "cannot open %s", path);
		list_for_each_entry (vcpu, &vm->vcpus, list) {
			fd = ioctl(vcpu->fd, KVM_GET_STATS_FD, NULL);
			TEST_ASSERT(fd >= 0, "KVM_GET_STATS_FD on vCPU %u", vcpu->id);
			fprintf(f, "vcpu %d %u", n_vms, vcpu->id);
			TEST_ASSERT(!print_pf(f, fd), "reading vCPU %u's statistics", vcpu->id);
			fputc('\n', f);
			close(fd);
		}
		TEST_ASSERT(!fclose(f), "cannot write %s", path);
		n_vms++;
	}
	__real_kvm_vm_free(vm);
}
