// SPDX-License-Identifier: GPL-2.0
/* Dirty logging on the test memslot, as dirty_log_perf_test drives it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "load.h"
#include "log.h"

static uint64_t test_pages(const struct vm *vm)
{
	return vm->test_size / LOAD_PAGE_SIZE;
}

/*
 * Manual protection makes KVM_GET_DIRTY_LOG a plain read and moves the
 * write-protection into KVM_CLEAR_DIRTY_LOG. INITIALLY_SET is left off on
 * purpose: with it, enabling the log would not write-protect anything and the
 * first iteration would take no faults; without it every iteration refaults
 * every page.
 */
int dirty_log_setup(struct vm *vm)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2,
		.args[0] = KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE,
	};
	int caps;

	vm->dirty_bitmap = calloc((test_pages(vm) + 63) / 64, sizeof(uint64_t));
	if (!vm->dirty_bitmap) {
		elog("out of memory for the dirty bitmap");
		return -1;
	}
	caps = ioctl(vm->fd, KVM_CHECK_EXTENSION, KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2);
	if (caps <= 0 || !(caps & KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE)) {
		vlog("dirty log: no manual protection, KVM_GET_DIRTY_LOG write-protects");
		return 0;
	}
	if (ioctl(vm->fd, KVM_ENABLE_CAP, &cap) < 0) {
		elog("KVM_ENABLE_CAP(KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2): %s", strerror(errno));
		return -1;
	}
	vm->manual_protect = true;
	vlog("dirty log: manual protection on (KVM_CLEAR_DIRTY_LOG after each get)");
	return 0;
}

int dirty_log_enable(struct vm *vm)
{
	return vm_set_test_flags(vm, vm->test_flags | KVM_MEM_LOG_DIRTY_PAGES);
}

int dirty_log_disable(struct vm *vm)
{
	return vm_set_test_flags(vm, vm->test_flags & ~KVM_MEM_LOG_DIRTY_PAGES);
}

int dirty_log_get(struct vm *vm, uint64_t *dirty_pages)
{
	struct kvm_dirty_log log = {
		.slot = TEST_SLOT,
		.dirty_bitmap = vm->dirty_bitmap,
	};
	uint64_t n = 0;

	if (ioctl(vm->fd, KVM_GET_DIRTY_LOG, &log) < 0) {
		elog("KVM_GET_DIRTY_LOG: %s", strerror(errno));
		return -1;
	}
	for (uint64_t i = 0; i < (test_pages(vm) + 63) / 64; i++)
		n += __builtin_popcountll(vm->dirty_bitmap[i]);
	*dirty_pages = n;
	return 0;
}

/* Clears (and so write-protects) exactly the pages the last get returned. */
int dirty_log_clear(struct vm *vm)
{
	struct kvm_clear_dirty_log clear = {
		.slot = TEST_SLOT,
		.first_page = 0,
		.num_pages = test_pages(vm),
		.dirty_bitmap = vm->dirty_bitmap,
	};

	if (ioctl(vm->fd, KVM_CLEAR_DIRTY_LOG, &clear) < 0) {
		elog("KVM_CLEAR_DIRTY_LOG: %s", strerror(errno));
		return -1;
	}
	return 0;
}
