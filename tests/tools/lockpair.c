// SPDX-License-Identifier: GPL-2.0
/*
 * lockpair: the mmu_lock object's pairing of lock:contention_begin/end,
 * driven deterministically with BPF_PROG_TEST_RUN on its raw_tp programs,
 * in this thread, on one CPU (the wait in progress is per CPU):
 *
 *   begin(mmu_lock) begin(other) end(other) ...20 ms... end(mmu_lock)
 *
 * is the qrwlock slow path taking its wait_lock (or an interrupt waiting for
 * another lock) inside an mmu_lock wait: the wait must last until the
 * mmu_lock's own end, not the inner one. Also: an end with no begin, and an
 * untraced lock's wait, count nothing. Prints one line per case and exits 1
 * if any fails (used by test_mmu.sh).
 *
 * Usage: lockpair
 */
#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kvmmmu.h"
#include "mmu_lock.skel.h"

/* include/trace/events/lock.h */
#define LCB_F_SPIN (1U << 0)
#define LCB_F_READ (1U << 1)

#define MMU_LOCK 0xffff888012345678ULL /* the traced VM's kvm->mmu_lock */
#define OTHER_LOCK 0xffff8880abcdef00ULL
#define INNER_WAIT_NS 20000000ULL

static int failures;

static int run(struct bpf_program *prog, __u64 lock, __u64 arg)
{
	__u64 args[2] = {lock, arg};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);

	if (err)
		fprintf(stderr, "lockpair: BPF_PROG_TEST_RUN %s: %s\n", bpf_program__name(prog),
			strerror(errno));
	return err;
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

static void expect(const char *name, bool ok, const char *what)
{
	printf("%s %s: %s\n", ok ? "PASS" : "FAIL", name, what);
	failures += !ok;
}

static int setup(struct mmu_lock_bpf **out)
{
	static struct kvmmmu_lock_table table;
	struct mmu_lock_bpf *skel = mmu_lock_bpf__open();
	struct bpf_program *p;
	cpu_set_t one;
	__u32 zero = 0;

	if (!skel) {
		fprintf(stderr, "lockpair: cannot open the mmu_lock object: %s\n", strerror(errno));
		return -1;
	}
	/* only the two raw_tp programs are run; nothing is attached */
	bpf_object__for_each_program (p, skel->obj)
		bpf_program__set_autoload(p, p == skel->progs.contention_begin_raw ||
						     p == skel->progs.contention_end_raw);
	if (mmu_lock_bpf__load(skel)) {
		fprintf(stderr, "lockpair: cannot load the mmu_lock object: %s\n", strerror(errno));
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
		fprintf(stderr, "lockpair: cannot fill the lock table: %s\n", strerror(errno));
		mmu_lock_bpf__destroy(skel);
		return -1;
	}
	/* every run on one CPU, as a spinning waiter's begin and end are */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		fprintf(stderr, "lockpair: sched_setaffinity: %s\n", strerror(errno));
		mmu_lock_bpf__destroy(skel);
		return -1;
	}
	*out = skel;
	return 0;
}

int main(void)
{
	struct timespec inner = {.tv_nsec = INNER_WAIT_NS};
	struct bpf_program *begin, *end;
	struct mmu_lock_bpf *skel;
	__u64 n, ns, n0, ns0;
	char what[128];

	if (setup(&skel))
		return 2;
	begin = skel->progs.contention_begin_raw;
	end = skel->progs.contention_end_raw;

	/* an end with no begin closes nothing */
	if (run(end, MMU_LOCK, 0))
		goto err;
	waits(skel, &n, &ns);
	snprintf(what, sizeof(what), "%llu waits", (unsigned long long)n);
	expect("end-without-begin", n == 0, what);

	/* a nested wait for another lock, inside the mmu_lock's */
	if (run(begin, MMU_LOCK, LCB_F_SPIN | LCB_F_READ) ||
	    run(begin, OTHER_LOCK, LCB_F_SPIN | LCB_F_READ) || run(end, OTHER_LOCK, 0))
		goto err;
	waits(skel, &n, &ns);
	snprintf(what, sizeof(what), "%llu waits after the inner end", (unsigned long long)n);
	expect("inner-end-keeps-the-wait-open", n == 0, what);
	nanosleep(&inner, NULL);
	if (run(end, MMU_LOCK, 0))
		goto err;
	waits(skel, &n, &ns);
	snprintf(what, sizeof(what), "%llu waits, %llu ns (at least 20 ms: closed at its own end)",
		 (unsigned long long)n, (unsigned long long)ns);
	expect("own-end-closes-it", n == 1 && ns >= INNER_WAIT_NS, what);

	/* the same end again, and a wait for an untraced lock: nothing more */
	n0 = n;
	ns0 = ns;
	if (run(end, MMU_LOCK, 0) || run(begin, OTHER_LOCK, LCB_F_SPIN | LCB_F_READ) ||
	    run(end, OTHER_LOCK, 0))
		goto err;
	waits(skel, &n, &ns);
	snprintf(what, sizeof(what), "%llu waits, %llu ns", (unsigned long long)n,
		 (unsigned long long)ns);
	expect("nothing-else-counts", n == n0 && ns == ns0, what);
	mmu_lock_bpf__destroy(skel);
	return failures ? 1 : 0;
err:
	mmu_lock_bpf__destroy(skel);
	return 2;
}
