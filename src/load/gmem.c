// SPDX-License-Identifier: GPL-2.0
/*
 * --gmem: the test memory is a guest_memfd the VMM maps (GUEST_MEMFD_FLAG_MMAP,
 * shared from the start), bound to the test memslot. KVM then takes each
 * fault's page and its mapping level from guest_memfd, not from the VMM's
 * page tables.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "load.h"
#include "log.h"

/*
 * Debian 12's <linux/kvm.h> is Linux 6.1's: the uapi of guest_memfd (6.8)
 * and of its mmap (6.18), named and laid out as the kernel's.
 */
#ifndef KVM_MEM_GUEST_MEMFD
#define KVM_MEM_GUEST_MEMFD (1UL << 2)
#endif
#ifndef KVM_SET_USER_MEMORY_REGION2
struct kvm_userspace_memory_region2 {
	__u32 slot;
	__u32 flags;
	__u64 guest_phys_addr;
	__u64 memory_size;
	__u64 userspace_addr;
	__u64 guest_memfd_offset;
	__u32 guest_memfd;
	__u32 pad1;
	__u64 pad2[14];
};

#define KVM_SET_USER_MEMORY_REGION2 _IOW(KVMIO, 0x49, struct kvm_userspace_memory_region2)
#endif
#ifndef KVM_CREATE_GUEST_MEMFD
struct kvm_create_guest_memfd {
	__u64 size;
	__u64 flags;
	__u64 reserved[6];
};

#define KVM_CREATE_GUEST_MEMFD _IOWR(KVMIO, 0xd4, struct kvm_create_guest_memfd)
#endif
#ifndef KVM_CAP_GUEST_MEMFD_FLAGS
#define KVM_CAP_GUEST_MEMFD_FLAGS 244
#endif
#ifndef GUEST_MEMFD_FLAG_MMAP
#define GUEST_MEMFD_FLAG_MMAP (1ULL << 0)
#endif
#ifndef GUEST_MEMFD_FLAG_INIT_SHARED
#define GUEST_MEMFD_FLAG_INIT_SHARED (1ULL << 1)
#endif

#define GMEM_FLAGS (GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED)

/*
 * The flags this VM's guest_memfd takes: asked of the VM, as KVM answers per
 * VM type (a VM with private memory gets no INIT_SHARED). A KVM without
 * the capability (6.12's; one without guest_memfd) answers 0.
 */
static int gmem_check(struct vm *vm)
{
	int flags = ioctl(vm->fd, KVM_CHECK_EXTENSION, KVM_CAP_GUEST_MEMFD_FLAGS);

	if (flags < 0 || (flags & GMEM_FLAGS) != GMEM_FLAGS) {
		elog("--gmem: this KVM has no guest_memfd the VMM can map "
		     "(KVM_CAP_GUEST_MEMFD_FLAGS lacks GUEST_MEMFD_FLAG_MMAP or INIT_SHARED)");
		return -1;
	}
	return 0;
}

int gmem_alloc(struct vm *vm)
{
	struct kvm_create_guest_memfd create = {.size = vm->test_size, .flags = GMEM_FLAGS};

	if (gmem_check(vm))
		return -1;
	vm->gmem_fd = ioctl(vm->fd, KVM_CREATE_GUEST_MEMFD, &create);
	if (vm->gmem_fd < 0) {
		elog("--gmem: KVM_CREATE_GUEST_MEMFD (%llu bytes): %s",
		     (unsigned long long)vm->test_size, strerror(errno));
		return -1;
	}
	/* not populated: the guest's first write to each page must be the fault counted */
	vm->test_map =
		mmap(NULL, vm->test_size, PROT_READ | PROT_WRITE, MAP_SHARED, vm->gmem_fd, 0);
	if (vm->test_map == MAP_FAILED) {
		vm->test_map = NULL;
		elog("--gmem: cannot map the guest_memfd: %s", strerror(errno));
		return -1;
	}
	vm->test_map_len = vm->test_size;
	vm->test_mem = vm->test_map;
	return 0;
}

int gmem_set_slot(struct vm *vm)
{
	struct kvm_userspace_memory_region2 r = {
		.slot = TEST_SLOT,
		.flags = KVM_MEM_GUEST_MEMFD,
		.guest_phys_addr = vm->test_gpa,
		.memory_size = vm->test_size,
		.userspace_addr = (uintptr_t)vm->test_mem,
		.guest_memfd_offset = 0,
		.guest_memfd = vm->gmem_fd,
	};

	if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION2, &r) < 0) {
		elog("--gmem: KVM_SET_USER_MEMORY_REGION2 (slot %u, %llu bytes at GPA 0x%llx): %s",
		     TEST_SLOT, (unsigned long long)vm->test_size, (unsigned long long)vm->test_gpa,
		     strerror(errno));
		return -1;
	}
	vm->test_flags = KVM_MEM_GUEST_MEMFD;
	return 0;
}

void gmem_free(struct vm *vm)
{
	if (vm->gmem_fd >= 0)
		close(vm->gmem_fd);
	vm->gmem_fd = -1;
}
