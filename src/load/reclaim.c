// SPDX-License-Identifier: GPL-2.0
/*
 * --reclaim MS: a host thread that drops a slice of the test memory's pages
 * (MADV_DONTNEED) every MS milliseconds while the vCPUs write, as host
 * reclaim, a balloon or KSM would. Each call is an MMU-notifier
 * invalidation: KVM zaps the SPTEs under mmu_lock held for write, vCPUs
 * that fault meanwhile wait for the lock (for read on the TDP MMU), and a
 * fault that raced with the invalidation returns RET_PF_RETRY before it
 * requests an SPTE.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "load.h"
#include "log.h"

#define SLICES 8 /* each call drops 1/8 of the test memory, in turn */

static struct {
	struct vm *vm;
	unsigned int ms;
	pthread_t thread;
	bool started;
	bool stop; /* __atomic */
	uint64_t calls;
} rc;

static void *reclaim_thread(void *arg)
{
	uint64_t pages = rc.vm->test_size / LOAD_PAGE_SIZE;
	uint64_t slice = pages / SLICES ? pages / SLICES : 1, next = 0;
	struct timespec pause = {rc.ms / 1000, (long)(rc.ms % 1000) * 1000000L};

	(void)arg;
	while (!__atomic_load_n(&rc.stop, __ATOMIC_ACQUIRE)) {
		uint64_t n = next + slice > pages ? pages - next : slice;

		nanosleep(&pause, NULL);
		if (madvise((char *)rc.vm->test_mem + next * LOAD_PAGE_SIZE, n * LOAD_PAGE_SIZE,
			    MADV_DONTNEED)) {
			elog("--reclaim: madvise(MADV_DONTNEED): %s", strerror(errno));
			break;
		}
		rc.calls++;
		next = next + n >= pages ? 0 : next + n;
	}
	return NULL;
}

int reclaim_start(struct vm *vm, unsigned int ms)
{
	int err;

	rc.vm = vm;
	rc.ms = ms;
	rc.calls = 0; /* each VM of --vms counts its own */
	__atomic_store_n(&rc.stop, false, __ATOMIC_RELEASE);
	err = pthread_create(&rc.thread, NULL, reclaim_thread, NULL);
	if (err) {
		elog("--reclaim: cannot start its thread: %s", strerror(err));
		return -1;
	}
	pthread_setname_np(rc.thread, "reclaim");
	rc.started = true;
	return 0;
}

uint64_t reclaim_stop(void)
{
	if (!rc.started)
		return 0;
	__atomic_store_n(&rc.stop, true, __ATOMIC_RELEASE);
	pthread_join(rc.thread, NULL);
	rc.started = false;
	return rc.calls;
}
