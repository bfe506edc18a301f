// SPDX-License-Identifier: GPL-2.0
/*
 * vCPU threads and pass synchronisation. The main thread starts a pass by
 * bumping a generation number; every vCPU thread re-enters KVM_RUN until its
 * guest reports the pass done with an "out", then waits for the next
 * generation. The main thread is the barrier: it waits until every vCPU has
 * finished before it times the pass and fetches the dirty log.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "load.h"
#include "log.h"

#define SIG_KICK SIGUSR1 /* pulls a vCPU thread out of KVM_RUN, as QEMU's SIG_IPI does */
#define POLL_NS 50000000 /* how often a waiting main thread looks at the stop flag */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t go;   /* main -> vCPUs: new pass, or stop */
	pthread_cond_t done; /* vCPUs -> main: a pass finished, or a vCPU failed */
	uint64_t gen;	     /* passes started */
	unsigned int finished;
	bool stop; /* read without the lock by vCPU threads, hence __atomic */
	bool failed;
	bool done_ready; /* done is initialised */
} r = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.go = PTHREAD_COND_INITIALIZER,
};

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t stop_signal, go_signal;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

static void on_go_signal(int sig)
{
	(void)sig;
	go_signal = 1;
}

static void on_kick(int sig)
{
	(void)sig;
}

/*
 * SIGINT and SIGTERM only set a flag that the main thread polls. SIG_KICK has
 * a no-op handler installed without SA_RESTART, so that a vCPU thread in
 * KVM_RUN gets EINTR back.
 */
int run_install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop_signal};
	struct sigaction kick = {.sa_handler = on_kick};
	struct sigaction go = {.sa_handler = on_go_signal, .sa_flags = SA_RESTART};

	sigemptyset(&sa.sa_mask);
	sigemptyset(&kick.sa_mask);
	sigemptyset(&go.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIG_KICK, &kick, NULL) || sigaction(SIGUSR1, &go, NULL)) {
		elog("sigaction: %s", strerror(errno));
		return -1;
	}
	return 0;
}

bool run_stop_requested(void)
{
	return stop_signal;
}

bool run_go_requested(void)
{
	return go_signal;
}

static bool stopping(void)
{
	return __atomic_load_n(&r.stop, __ATOMIC_ACQUIRE);
}

static const char *exit_reason_name(uint32_t reason)
{
	static const char *const names[] = {
		[KVM_EXIT_UNKNOWN] = "KVM_EXIT_UNKNOWN",
		[KVM_EXIT_EXCEPTION] = "KVM_EXIT_EXCEPTION",
		[KVM_EXIT_IO] = "KVM_EXIT_IO",
		[KVM_EXIT_HYPERCALL] = "KVM_EXIT_HYPERCALL",
		[KVM_EXIT_DEBUG] = "KVM_EXIT_DEBUG",
		[KVM_EXIT_HLT] = "KVM_EXIT_HLT",
		[KVM_EXIT_MMIO] = "KVM_EXIT_MMIO",
		[KVM_EXIT_IRQ_WINDOW_OPEN] = "KVM_EXIT_IRQ_WINDOW_OPEN",
		[KVM_EXIT_SHUTDOWN] = "KVM_EXIT_SHUTDOWN",
		[KVM_EXIT_FAIL_ENTRY] = "KVM_EXIT_FAIL_ENTRY",
		[KVM_EXIT_INTR] = "KVM_EXIT_INTR",
		[KVM_EXIT_SET_TPR] = "KVM_EXIT_SET_TPR",
		[KVM_EXIT_TPR_ACCESS] = "KVM_EXIT_TPR_ACCESS",
		[KVM_EXIT_NMI] = "KVM_EXIT_NMI",
		[KVM_EXIT_INTERNAL_ERROR] = "KVM_EXIT_INTERNAL_ERROR",
		[KVM_EXIT_SYSTEM_EVENT] = "KVM_EXIT_SYSTEM_EVENT",
		[KVM_EXIT_X86_RDMSR] = "KVM_EXIT_X86_RDMSR",
		[KVM_EXIT_X86_WRMSR] = "KVM_EXIT_X86_WRMSR",
	};

	if (reason < sizeof(names) / sizeof(names[0]) && names[reason])
		return names[reason];
	return "unknown exit";
}

static void report_exit(const struct vcpu *v)
{
	const struct kvm_run *run = v->run;

	pthread_mutex_lock(&print_lock);
	switch (run->exit_reason) {
	case KVM_EXIT_SHUTDOWN:
		elog("vCPU %d: guest shut down (KVM_EXIT_SHUTDOWN, e.g. a triple fault)", v->id);
		break;
	case KVM_EXIT_IO:
		elog("vCPU %d: unexpected KVM_EXIT_IO: %s port 0x%x, size %u, count %u", v->id,
		     run->io.direction == KVM_EXIT_IO_OUT ? "out to" : "in from", run->io.port,
		     run->io.size, run->io.count);
		break;
	case KVM_EXIT_MMIO:
		elog("vCPU %d: unexpected KVM_EXIT_MMIO: %s GPA 0x%llx, %u bytes", v->id,
		     run->mmio.is_write ? "write to" : "read from", run->mmio.phys_addr,
		     run->mmio.len);
		break;
	case KVM_EXIT_FAIL_ENTRY:
		elog("vCPU %d: KVM_EXIT_FAIL_ENTRY, hardware reason 0x%llx", v->id,
		     run->fail_entry.hardware_entry_failure_reason);
		break;
	case KVM_EXIT_INTERNAL_ERROR:
		elog("vCPU %d: KVM_EXIT_INTERNAL_ERROR, suberror %u", v->id,
		     run->internal.suberror);
		break;
	default:
		elog("vCPU %d: unexpected exit %s (%u)", v->id, exit_reason_name(run->exit_reason),
		     run->exit_reason);
		break;
	}
	guest_dump_vcpu(stderr, v);
	pthread_mutex_unlock(&print_lock);
}

/* Returns 0 when the guest finished a pass, 1 when stopped, -1 on error (reported). */
static int vcpu_run_pass(struct vcpu *v)
{
	struct kvm_run *run = v->run;

	for (;;) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno != EINTR && errno != EAGAIN) {
				pthread_mutex_lock(&print_lock);
				elog("vCPU %d: KVM_RUN: %s", v->id, strerror(errno));
				guest_dump_vcpu(stderr, v);
				pthread_mutex_unlock(&print_lock);
				return -1;
			}
			if (stopping())
				return 1;
			continue;
		}
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			if (run->io.port == LOAD_PORT && run->io.direction == KVM_EXIT_IO_OUT)
				return 0;
			break;
		case KVM_EXIT_MMIO:
			/* --mmio's reads: a device that reads as zero */
			if (v->vm->mmio_reads && !run->mmio.is_write &&
			    run->mmio.phys_addr - MMIO_GPA < LOAD_PAGE_SIZE) {
				memset(run->mmio.data, 0, sizeof(run->mmio.data));
				v->mmio_exits++;
				continue;
			}
			break;
		case KVM_EXIT_INTR:
			if (stopping())
				return 1;
			continue;
		}
		report_exit(v);
		return -1;
	}
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	uint64_t next = 1;

	for (;; next++) {
		bool stop;
		int ret;

		pthread_mutex_lock(&r.lock);
		while (!r.stop && r.gen < next)
			pthread_cond_wait(&r.go, &r.lock);
		stop = r.stop;
		pthread_mutex_unlock(&r.lock);
		if (stop)
			break;

		ret = vcpu_run_pass(v);

		pthread_mutex_lock(&r.lock);
		if (ret < 0)
			r.failed = true;
		else if (!ret)
			r.finished++;
		pthread_cond_signal(&r.done);
		pthread_mutex_unlock(&r.lock);
		if (ret)
			break;
	}
	return NULL;
}

int run_start(struct vm *vm, enum thread_names names)
{
	pthread_condattr_t ca;
	sigset_t block, old;
	int err = 0;

	/* a VM's threads start afresh: --vms runs VMs in turn, each with threads of its own */
	r.gen = 0;
	r.finished = 0;
	r.failed = false;
	__atomic_store_n(&r.stop, false, __ATOMIC_RELEASE);
	/* The main thread waits with a timeout, on CLOCK_MONOTONIC. */
	if (r.done_ready) /* the previous VM's, for --vms */
		pthread_cond_destroy(&r.done);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r.done, &ca);
	r.done_ready = true;
	pthread_condattr_destroy(&ca);

	/* vCPU threads inherit a mask that leaves SIGINT and SIGTERM to the main thread. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		char name[16];

		err = pthread_create(&v->thread, NULL, vcpu_thread, v);
		if (err) {
			elog("cannot start the thread of vCPU %d: %s", v->id, strerror(err));
			break;
		}
		v->started = true;
		/* QEMU's names by default, so tools treat us like a VM; others to test them. */
		if (names == THREAD_NAMES_PLAIN)
			continue;
		snprintf(name, sizeof(name),
			 names == THREAD_NAMES_QEMU ? "CPU %d/KVM" : "fc_vcpu %d", v->id);
		pthread_setname_np(v->thread, name);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err ? -1 : 0;
}

enum pass_result run_pass(struct vm *vm)
{
	enum pass_result res;

	pthread_mutex_lock(&r.lock);
	r.gen++;
	r.finished = 0;
	pthread_cond_broadcast(&r.go);
	while (r.finished < vm->nr_vcpus && !r.failed && !stop_signal) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += POLL_NS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&r.done, &r.lock, &ts);
	}
	if (r.failed)
		res = PASS_FAILED;
	else if (r.finished < vm->nr_vcpus)
		res = PASS_STOPPED;
	else
		res = PASS_DONE;
	pthread_mutex_unlock(&r.lock);
	return res;
}

/*
 * immediate_exit covers a thread that is about to enter KVM_RUN, the kick
 * covers one already inside it; the flag is set first so neither can miss.
 */
void run_stop(struct vm *vm)
{
	pthread_mutex_lock(&r.lock);
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&r.go);
	pthread_mutex_unlock(&r.lock);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		__atomic_store_n(&vm->vcpus[i].run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		if (vm->vcpus[i].started)
			pthread_kill(vm->vcpus[i].thread, SIG_KICK);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		if (vm->vcpus[i].started)
			pthread_join(vm->vcpus[i].thread, NULL);
		vm->vcpus[i].started = false;
	}
}
