// SPDX-License-Identifier: GPL-2.0
/*
 * --uffd: the test memory registered with userfaultfd for missing pages, as
 * a post-copy migration's destination or a snapshot restore has it. A vCPU's
 * first touch of a page faults into KVM, whose look-up of the host page
 * (kvm_faultin_pfn, GUP) sleeps in handle_userfault() until this thread
 * supplies the page (UFFDIO_COPY): the fault's time goes to resolving the
 * host page, off the CPU, as in KVM's demand_paging_test -u MISSING.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "load.h"
#include "log.h"

static struct {
	int fd;
	int stop[2]; /* a pipe: its write end closed, the thread returns */
	pthread_t thread;
	bool started;
	bool failed;   /* the thread stopped on an error: the run fails */
	bool stopping; /* uffd_stop() asked it to */
	__u64 len;     /* the registered range's */
	uint64_t copies;
	char page[LOAD_PAGE_SIZE] __attribute__((aligned(LOAD_PAGE_SIZE))); /* zeroes */
} uf = {.fd = -1, .stop = {-1, -1}};

/* Supplies the page of one missing-page message; 0, or -1 (said). */
static int supply(const struct uffd_msg *msg)
{
	struct uffdio_copy copy = {
		.dst = msg->arg.pagefault.address & ~(__u64)(LOAD_PAGE_SIZE - 1),
		.src = (__u64)(uintptr_t)uf.page,
		.len = LOAD_PAGE_SIZE,
	};

	struct uffdio_range page = {.start = copy.dst, .len = LOAD_PAGE_SIZE};

	if (!ioctl(uf.fd, UFFDIO_COPY, &copy)) {
		uf.copies++;
		return 0;
	}
	/* another fault's message had the page supplied first: wake this one's waiter */
	if (errno == EEXIST && !ioctl(uf.fd, UFFDIO_WAKE, &page))
		return 0;
	elog("--uffd: %s: %s", errno == EEXIST ? "UFFDIO_WAKE" : "UFFDIO_COPY", strerror(errno));
	return -1;
}

static void *uffd_thread(void *arg)
{
	struct pollfd p[2] = {{.fd = uf.fd, .events = POLLIN},
			      {.fd = uf.stop[0], .events = POLLIN}};
	struct uffd_msg msg;

	(void)arg;
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			elog("--uffd: poll: %s", strerror(errno));
			break;
		}
		if (p[1].revents)
			break;
		if (read(uf.fd, &msg, sizeof(msg)) != sizeof(msg)) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			elog("--uffd: read: %s", strerror(errno));
			break;
		}
		if (msg.event == UFFD_EVENT_PAGEFAULT && supply(&msg))
			break;
	}
	return NULL;
}

/*
 * The thread stopped on an error: the memory goes back to ordinary faults
 * (unregistering wakes the faults waiting in it), or its vCPUs would wait
 * in KVM for good; the run fails.
 */
static void *uffd_thread_main(void *arg)
{
	struct uffdio_range all = {.start = (__u64)(uintptr_t)arg, .len = uf.len};

	uffd_thread(NULL);
	if (!__atomic_load_n(&uf.stopping, __ATOMIC_ACQUIRE)) {
		uf.failed = true;
		ioctl(uf.fd, UFFDIO_UNREGISTER, &all);
	}
	return NULL;
}

int uffd_start(struct vm *vm)
{
	struct uffdio_api api = {.api = UFFD_API};
	struct uffdio_register reg = {
		.range = {.start = (__u64)(uintptr_t)vm->test_mem, .len = vm->test_size},
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int err;

	uf.copies = 0; /* each VM of --vms counts its own */
	uf.failed = uf.stopping = false;
	uf.len = vm->test_size;
	uf.fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uf.fd < 0) {
		elog("--uffd: userfaultfd: %s%s", strerror(errno),
		     errno == EPERM ? " (needs root, or vm.unprivileged_userfaultfd=1)" : "");
		return -1;
	}
	if (ioctl(uf.fd, UFFDIO_API, &api) || ioctl(uf.fd, UFFDIO_REGISTER, &reg)) {
		elog("--uffd: registering the test memory: %s", strerror(errno));
		goto fail;
	}
	if (pipe2(uf.stop, O_CLOEXEC)) {
		elog("--uffd: pipe: %s", strerror(errno));
		goto fail;
	}
	err = pthread_create(&uf.thread, NULL, uffd_thread_main, vm->test_mem);
	if (err) {
		elog("--uffd: cannot start its thread: %s", strerror(err));
		goto fail;
	}
	pthread_setname_np(uf.thread, "uffd");
	uf.started = true;
	return 0;
fail:
	uffd_stop(NULL);
	return -1;
}

int uffd_stop(uint64_t *copies)
{
	if (uf.started) {
		__atomic_store_n(&uf.stopping, true, __ATOMIC_RELEASE);
		close(uf.stop[1]);
		uf.stop[1] = -1;
		pthread_join(uf.thread, NULL);
		uf.started = false;
	}
	for (int i = 0; i < 2; i++) {
		if (uf.stop[i] >= 0)
			close(uf.stop[i]);
		uf.stop[i] = -1;
	}
	/* closing it unregisters the memory: what was never touched faults as usual */
	if (uf.fd >= 0)
		close(uf.fd);
	uf.fd = -1;
	if (copies)
		*copies = uf.copies;
	return uf.failed ? -1 : 0;
}
