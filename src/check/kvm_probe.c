// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "check.h"
#include "kvm_stats.h"

/* The per-vCPU statistics kvmmmu compares its own counts with. */
static const char *const fault_stats[] = {"pf_taken", "pf_fixed", "pf_spurious", "pf_fast"};

static void stats_of(const char *label, int fd, bool per_vcpu)
{
	struct kvm_stats s;
	int err = kvm_stats_open_kvm_fd(&s, fd);

	if (err) {
		report_item(label, "no", "%s", strerror(-err));
		return;
	}
	report_item(label, "yes", "%zu descriptors (id %s)", s.n_desc, s.id ? s.id : "?");
	for (size_t i = 0; per_vcpu && i < sizeof(fault_stats) / sizeof(fault_stats[0]); i++) {
		char name[64];
		bool has = kvm_stats_find(&s, fault_stats[i]) != NULL;

		snprintf(name, sizeof(name), "  vCPU statistic %s", fault_stats[i]);
		report_item(name, yes_no(has), NULL);
	}
	kvm_stats_close(&s);
}

/* A VM and one vCPU, to see KVM_GET_STATS_FD work rather than only advertised. */
static void stats_fd(int kvm)
{
	int vm, vcpu;

	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		report_item("KVM_CREATE_VM", "no", "%s", strerror(errno));
		return;
	}
	stats_of("KVM_GET_STATS_FD on a VM", vm, false);
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		report_item("KVM_CREATE_VCPU", "no", "%s", strerror(errno));
	else
		stats_of("KVM_GET_STATS_FD on a vCPU", vcpu, true);
	if (vcpu >= 0)
		close(vcpu);
	close(vm);
}

void check_dev_kvm(void)
{
	int kvm, version, cap;

	report_heading("/dev/kvm and KVM binary statistics");
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		report_item("/dev/kvm", "no", "open: %s", strerror(errno));
		return;
	}
	version = ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION) {
		report_item("/dev/kvm", "no", "KVM_GET_API_VERSION: %s",
			    version < 0 ? strerror(errno) : "unexpected version");
		close(kvm);
		return;
	}
	report_item("/dev/kvm", "yes", "KVM_GET_API_VERSION %d", version);
	cap = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD);
	report_item("KVM_CAP_BINARY_STATS_FD", yes_no(cap > 0), "%s",
		    cap > 0 ? "KVM_CHECK_EXTENSION" : "kernel older than 5.14?");
	if (cap > 0)
		stats_fd(kvm);
	close(kvm);
}
