// SPDX-License-Identifier: GPL-2.0
/*
 * bpfscenarios' mmu_lock cases (main() is in bpfscenarios.c).
 *
 * lock/: the mmu_lock object pairs lock:contention_begin/end by lock.
 *   begin(mmu_lock) begin(other) end(other) ...20 ms... end(mmu_lock)
 * is the qrwlock slow path taking its wait_lock (or an interrupt waiting for
 * another lock) inside an mmu_lock wait: the wait lasts until the mmu_lock's
 * own end, not the inner one. An end with no begin, and an untraced lock's
 * wait, count nothing.
 *
 * lock-in-fault/: which waits are a fault's. With --sample only a timed
 * fault's wait is (the fault time it is a share of is the timed faults');
 * an emulator's walk followed by KVM_RUN's return leaves no fault open for
 * the root reload's wait at re-entry; with function probes only
 * kvm_mmu_page_fault's bounds make a wait a fault's, never a walk.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kvmmmu.h"
#include "faults.skel.h"
#include "mmu_lock.skel.h"
#include "bpfscenarios.h"

/* include/trace/events/lock.h */
#define LCB_F_SPIN (1U << 0)
#define LCB_F_READ (1U << 1)

#define MMU_LOCK 0xffff888012345678ULL /* the traced VM's kvm->mmu_lock */
#define OTHER_LOCK 0xffff8880abcdef00ULL
#define INNER_WAIT_NS 20000000ULL

static int run(struct bpf_program *prog, __u64 lock, __u64 arg)
{
	return run3(prog, lock, arg, 0);
}

/* This thread's read waits outside faults: how many, and their ns. */
static void waits(struct mmu_lock_bpf *skel, __u64 *n, __u64 *ns)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};
	struct kvmmmu_lock_stats s;

	*n = *ns = 0;
	if (!bpf_map__lookup_elem(skel->maps.lock_stats, &key, sizeof(key), &s, sizeof(s), 0)) {
		*n = s.other_waits[KVMMMU_LOCK_READ];
		*ns = s.other_wait_ns[KVMMMU_LOCK_READ];
	}
}

/*
 * The mmu_lock object, FUNC_MODE as user space sets it; sharing the faults
 * object's per-thread map THREAD_STATS_FD (as kvmmmu does) unless it is -1.
 */
static int setup_lock(struct mmu_lock_bpf **out, bool func_mode, int thread_stats_fd)
{
	static struct kvmmmu_lock_table table;
	struct mmu_lock_bpf *skel = mmu_lock_bpf__open();
	struct bpf_program *p;
	__u32 zero = 0;

	if (!skel) {
		fprintf(stderr, "bpfscenarios: cannot open the mmu_lock object: %s\n",
			strerror(errno));
		return -1;
	}
	/* only the two raw_tp programs are run; nothing is attached */
	bpf_object__for_each_program (p, skel->obj)
		bpf_program__set_autoload(p, p == skel->progs.contention_begin_raw ||
						     p == skel->progs.contention_end_raw);
	skel->rodata->func_mode = func_mode;
	if (thread_stats_fd >= 0 && bpf_map__reuse_fd(skel->maps.thread_stats, thread_stats_fd)) {
		fprintf(stderr, "bpfscenarios: cannot share the per-thread map: %s\n",
			strerror(errno));
		mmu_lock_bpf__destroy(skel);
		return -1;
	}
	if (mmu_lock_bpf__load(skel)) {
		fprintf(stderr, "bpfscenarios: cannot load the mmu_lock object: %s\n",
			strerror(errno));
		mmu_lock_bpf__destroy(skel);
		return -1;
	}
	/* MMU_LOCK is a traced VM's, this process's, in every slot its set could use */
	for (size_t i = 0; i < KVMMMU_LOCK_SLOTS; i++) {
		table.slots[i].lock = MMU_LOCK;
		table.slots[i].tgid = getpid();
	}
	if (bpf_map__update_elem(skel->maps.mmu_locks, &zero, sizeof(zero), &table, sizeof(table),
				 0)) {
		fprintf(stderr, "bpfscenarios: cannot fill the lock table: %s\n", strerror(errno));
		mmu_lock_bpf__destroy(skel);
		return -1;
	}
	*out = skel;
	return 0;
}

int lock_scenarios(void)
{
	struct timespec inner = {.tv_nsec = INNER_WAIT_NS};
	struct bpf_program *begin, *end;
	struct mmu_lock_bpf *skel;
	__u64 n, ns, n0, ns0;
	char what[128];

	if (setup_lock(&skel, false, -1))
		return -1;
	begin = skel->progs.contention_begin_raw;
	end = skel->progs.contention_end_raw;

	/* an end with no begin closes nothing */
	if (run(end, MMU_LOCK, 0))
		goto err;
	waits(skel, &n, &ns);
	snprintf(what, sizeof(what), "%llu waits", (unsigned long long)n);
	expect("lock/end-without-begin", n == 0, what);

	/* a nested wait for another lock, inside the mmu_lock's */
	if (run(begin, MMU_LOCK, LCB_F_SPIN | LCB_F_READ) ||
	    run(begin, OTHER_LOCK, LCB_F_SPIN | LCB_F_READ) || run(end, OTHER_LOCK, 0))
		goto err;
	waits(skel, &n, &ns);
	snprintf(what, sizeof(what), "%llu waits after the inner end", (unsigned long long)n);
	expect("lock/inner-end-keeps-the-wait-open", n == 0, what);
	nanosleep(&inner, NULL);
	if (run(end, MMU_LOCK, 0))
		goto err;
	waits(skel, &n, &ns);
	snprintf(what, sizeof(what), "%llu waits, %llu ns (at least 20 ms: closed at its own end)",
		 (unsigned long long)n, (unsigned long long)ns);
	expect("lock/own-end-closes-it", n == 1 && ns >= INNER_WAIT_NS, what);

	/* the same end again, and a wait for an untraced lock: nothing more */
	n0 = n;
	ns0 = ns;
	if (run(end, MMU_LOCK, 0) || run(begin, OTHER_LOCK, LCB_F_SPIN | LCB_F_READ) ||
	    run(end, OTHER_LOCK, 0))
		goto err;
	waits(skel, &n, &ns);
	snprintf(what, sizeof(what), "%llu waits, %llu ns", (unsigned long long)n,
		 (unsigned long long)ns);
	expect("lock/nothing-else-counts", n == n0 && ns == ns0, what);
	mmu_lock_bpf__destroy(skel);
	return 0;
err:
	mmu_lock_bpf__destroy(skel);
	return -1;
}

/* This thread's read waits inside faults (the faults entry's histogram), or -1 if it has none. */
static long long fault_waits(int thread_stats_fd)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};
	struct kvmmmu_thread_stats s;

	if (bpf_map_lookup_elem(thread_stats_fd, &key, &s))
		return -1;
	return (long long)s.lock_wait[KVMMMU_LOCK_READ].count;
}

/* One wait for the traced mmu_lock, for read. */
static int one_wait(struct mmu_lock_bpf *skel)
{
	return run(skel->progs.contention_begin_raw, MMU_LOCK, LCB_F_SPIN | LCB_F_READ) ||
	       run(skel->progs.contention_end_raw, MMU_LOCK, 0);
}

/*
 * One wait with this thread's fault state ST; then NAME passes if the waits
 * in faults and outside them (cumulative) are WANT_IN and WANT_OUT.
 */
static int wait_in_state(struct mmu_lock_bpf *skel, const struct kvmmmu_fault_state *st,
			 const char *name, long long want_in, __u64 want_out)
{
	int fd = bpf_map__fd(skel->maps.thread_stats);
	char what[128];
	long long in;
	__u64 n, ns;

	if (put_fault_state(fd, st) || one_wait(skel))
		return -1;
	in = fault_waits(fd);
	waits(skel, &n, &ns);
	snprintf(what, sizeof(what), "%lld waits in faults, %llu outside", in,
		 (unsigned long long)n);
	expect(name, in == want_in && n == want_out, what);
	return 0;
}

/*
 * Tracepoint mode (a fault is its walk until its SPTE): a wait in a fault
 * --sample left untimed adds nothing, a timed one's is the fault's. Function
 * probes: a walk alone (the emulator's) is no fault, kvm_mmu_page_fault is.
 */
int in_fault_scenarios(void)
{
	struct kvmmmu_fault_state untimed = {.walked = 1}, timed = {.walked = 1, .timed = 1};
	struct kvmmmu_fault_state in_func = {.walked = 1, .timed = 1, .in_fault = 1};
	struct mmu_lock_bpf *skel;
	int err;

	if (setup_lock(&skel, false, -1))
		return -1;
	err = wait_in_state(skel, &untimed, "lock-in-fault/untimed-fault-adds-no-wait", 0, 0) ||
	      wait_in_state(skel, &timed, "lock-in-fault/timed-fault-adds-its-wait", 1, 0);
	mmu_lock_bpf__destroy(skel);
	if (err || setup_lock(&skel, true, -1))
		return -1;
	err = wait_in_state(skel, &timed, "lock-in-fault/func-walk-alone-is-no-fault", 0, 1) ||
	      wait_in_state(skel, &in_func, "lock-in-fault/func-in-kvm_mmu_page_fault", 1, 1);
	mmu_lock_bpf__destroy(skel);
	return err ? -1 : 0;
}

/*
 * Tracepoint mode: the emulator walks an MMIO address, KVM_RUN returns to
 * user space, and at re-entry the root reload waits for mmu_lock: that wait
 * is the thread's own, not a fault's.
 */
int reload_lock_scenarios(void)
{
	struct mmu_lock_bpf *lock;
	struct faults_bpf *skel;
	__u64 n, ns;
	long long in;
	char what[128];

	if (setup_faults(&skel, 1))
		return -1;
	if (setup_lock(&lock, false, bpf_map__fd(skel->maps.thread_stats))) {
		faults_bpf__destroy(skel);
		return -1;
	}
	if (run3(skel->progs.kvm_mmu_pagetable_walk_raw, 0xfee00000, 0, 0) ||
	    run3(skel->progs.kvm_userspace_exit_raw, 0, 0, 0) || one_wait(lock))
		goto err;
	in = fault_waits(bpf_map__fd(skel->maps.thread_stats));
	waits(lock, &n, &ns);
	snprintf(what, sizeof(what), "%lld waits in faults, %llu outside", in,
		 (unsigned long long)n);
	expect("lock-in-fault/reload-after-emulator-walk-is-no-fault", in == 0 && n == 1, what);
	mmu_lock_bpf__destroy(lock);
	faults_bpf__destroy(skel);
	return 0;
err:
	mmu_lock_bpf__destroy(lock);
	faults_bpf__destroy(skel);
	return -1;
}
