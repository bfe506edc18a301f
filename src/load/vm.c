// SPDX-License-Identifier: GPL-2.0
/* VM, memslot and vCPU creation for kvmmmu-load. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "load.h"
#include "log.h"

#define SIZE_2M (2ULL << 20)

int kvm_open_dev(void)
{
	static const char denied[] = "not permitted (run as root or join the kvm group)";
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int version;

	if (fd < 0) {
		elog("KVM is not available: /dev/kvm: %s",
		     errno == EACCES || errno == EPERM ? denied : strerror(errno));
		return -1;
	}
	version = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (version < 0) {
		elog("KVM is not available: /dev/kvm: KVM_GET_API_VERSION: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (version != KVM_API_VERSION) {
		elog("KVM is not available: /dev/kvm: API version %d, expected %d", version,
		     KVM_API_VERSION);
		close(fd);
		return -1;
	}
	return fd;
}

static int set_slot(struct vm *vm, uint32_t slot, uint32_t flags, uint64_t gpa, uint64_t size,
		    void *hva)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot,
		.flags = flags,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &r) < 0) {
		elog("KVM_SET_USER_MEMORY_REGION (slot %u, %llu bytes at GPA 0x%llx): %s", slot,
		     (unsigned long long)size, (unsigned long long)gpa, strerror(errno));
		return -1;
	}
	return 0;
}

int vm_set_test_flags(struct vm *vm, uint32_t flags)
{
	if (set_slot(vm, TEST_SLOT, flags, vm->test_gpa, vm->test_size, vm->test_mem))
		return -1;
	vm->test_flags = flags;
	return 0;
}

/*
 * Test memory is neither prefaulted nor MAP_POPULATEd: the guest's first write
 * to each page must be the fault we count. The block is aligned to 2 MiB so
 * that, with --thp, KVM can map host huge pages with 2 MiB SPTEs.
 */
static int alloc_test_memory(struct vm *vm, bool thp)
{
	uintptr_t p;

	vm->test_map_len = vm->test_size + SIZE_2M;
	vm->test_map = mmap(NULL, vm->test_map_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->test_map == MAP_FAILED) {
		vm->test_map = NULL;
		elog("cannot map %llu bytes of test memory: %s", (unsigned long long)vm->test_size,
		     strerror(errno));
		return -1;
	}
	p = ((uintptr_t)vm->test_map + SIZE_2M - 1) & ~(uintptr_t)(SIZE_2M - 1);
	vm->test_mem = (void *)p;
	if (madvise(vm->test_mem, vm->test_size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		if (thp) {
			elog("--thp: transparent huge pages are not available: madvise: %s",
			     strerror(errno));
			return -1;
		}
		vlog("madvise(MADV_NOHUGEPAGE): %s (ignored)", strerror(errno));
	}
	return 0;
}

static int create_vcpu(struct vm *vm, struct vcpu *v, int id, const struct kvm_cpuid2 *cpuid)
{
	int err;

	v->vm = vm;
	v->id = id;
	v->fd = ioctl(vm->fd, KVM_CREATE_VCPU, id);
	if (v->fd < 0) {
		elog("KVM_CREATE_VCPU %d: %s", id, strerror(errno));
		return -1;
	}
	v->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		v->run = NULL;
		elog("vCPU %d: cannot map kvm_run: %s", id, strerror(errno));
		return -1;
	}
	if (vm->shared) { /* all at the same pages, in the same order: they collide */
		v->gpa = vm->test_gpa;
		v->pages = vm->test_size / LOAD_PAGE_SIZE;
	} else {
		v->gpa = vm->test_gpa + (uint64_t)id * (vm->test_size / vm->nr_vcpus);
		v->pages = vm->test_size / vm->nr_vcpus / LOAD_PAGE_SIZE;
	}
	if (guest_init_vcpu(v, cpuid))
		return -1;
	err = vm->no_stats_fds ? -ENOTSUP : kvm_stats_open_kvm_fd(&v->stats, v->fd);
	if (err && !vm->no_stats_fds)
		vlog("vCPU %d: KVM_GET_STATS_FD: %s (no statistics)", id, strerror(-err));
	v->have_stats = !err;
	return 0;
}

int vm_create(struct vm *vm, int kvm_fd, const struct load_opts *o)
{
	struct kvm_cpuid2 *cpuid = NULL;
	int size, err, ret = -1;

	memset(vm, 0, sizeof(*vm));
	vm->kvm_fd = kvm_fd;
	vm->fd = -1;
	vm->nr_vcpus = o->vcpus;
	vm->shared = o->shared;
	vm->no_stats_fds = o->no_stats_fds;
	vm->mode = o->mode;
	vm->mmio_reads = o->mmio_reads;
	vm->access = o->access;
	vm->gmem = o->gmem;
	vm->gmem_fd = -1;
	vm->test_gpa = guest_mode_is_long(o->mode) ? TEST_GPA : TEST_GPA_32;
	vm->test_size = o->shared ? o->mem : o->mem * o->vcpus;

	size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size < (int)sizeof(struct kvm_run)) {
		elog("KVM_GET_VCPU_MMAP_SIZE: %s", size < 0 ? strerror(errno) : "too small");
		return -1;
	}
	vm->run_size = size;

	vm->fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm->fd < 0) {
		elog("KVM_CREATE_VM: %s", strerror(errno));
		return -1;
	}
	err = o->no_stats_fds ? -ENOTSUP : kvm_stats_open_kvm_fd(&vm->stats, vm->fd);
	if (err && !o->no_stats_fds)
		vlog("VM: KVM_GET_STATS_FD: %s (no statistics)", strerror(-err));
	vm->have_stats = !err;

	vm->sys_size = guest_sys_size(vm->nr_vcpus, vm->test_gpa, vm->test_size);
	vm->sys_mem = mmap(NULL, vm->sys_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	if (vm->sys_mem == MAP_FAILED) {
		vm->sys_mem = NULL;
		elog("cannot map guest system memory: %s", strerror(errno));
		return -1;
	}
	guest_build_memory(vm);
	if (o->gmem ? gmem_alloc(vm) : alloc_test_memory(vm, o->thp))
		return -1;
	/* --access exec: each page begins with "jmp *%r12", back to the guest's loop */
	for (uint64_t off = 0; o->access == ACCESS_EXEC && off < vm->test_size;
	     off += LOAD_PAGE_SIZE)
		memcpy((char *)vm->test_mem + off, "\x41\xff\xe4", 3);
	if (set_slot(vm, SYS_SLOT, 0, 0, vm->sys_size, vm->sys_mem) ||
	    (o->gmem ? gmem_set_slot(vm) : vm_set_test_flags(vm, 0)))
		return -1;
	vlog("memslot %d: GPA 0x0-0x%llx, page tables, GDT and code", SYS_SLOT,
	     (unsigned long long)vm->sys_size);
	vlog("memslot %d: GPA 0x%llx-0x%llx, test memory at %p", TEST_SLOT,
	     (unsigned long long)vm->test_gpa, (unsigned long long)(vm->test_gpa + vm->test_size),
	     vm->test_mem);

	cpuid = guest_supported_cpuid(kvm_fd);
	vm->vcpus = calloc(vm->nr_vcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus) {
		elog("out of memory");
		goto out;
	}
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vm->vcpus[i].fd = -1;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		if (create_vcpu(vm, &vm->vcpus[i], i, cpuid))
			goto out;
	ret = 0;
out:
	free(cpuid);
	return ret;
}

void vm_destroy(struct vm *vm)
{
	if (vm->vcpus) {
		for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
			struct vcpu *v = &vm->vcpus[i];

			if (v->have_stats)
				kvm_stats_close(&v->stats);
			if (v->run)
				munmap(v->run, vm->run_size);
			if (v->fd >= 0)
				close(v->fd);
		}
		free(vm->vcpus);
	}
	if (vm->have_stats)
		kvm_stats_close(&vm->stats);
	if (vm->fd >= 0)
		close(vm->fd);
	if (vm->test_map)
		munmap(vm->test_map, vm->test_map_len);
	if (vm->gmem)
		gmem_free(vm);
	if (vm->sys_mem)
		munmap(vm->sys_mem, vm->sys_size);
	free(vm->dirty_bitmap);
	memset(vm, 0, sizeof(*vm));
	vm->fd = -1;
}
