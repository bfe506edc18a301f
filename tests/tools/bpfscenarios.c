// SPDX-License-Identifier: GPL-2.0
/*
 * bpfscenarios: kvmmmu's BPF programs driven through event sequences with
 * BPF_PROG_TEST_RUN on their raw_tp twins, in this thread, on one CPU (per-CPU
 * state stays put): deterministic cases of what a live kernel shows only by
 * chance. Prints one PASS/FAIL line per case; exits 1 if any fails, 2 if the
 * programs cannot run (used by test_mmu.sh).
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
 *
 * sample/: --sample times 1 in N of the faults KVM counts, whatever other
 * events start timing in between.
 *
 * exit-walk/: the faults object's tracepoint model. A page-fault exit whose
 * fault shows no SPTE request ends at KVM_RUN's return (RET_PF_RETRY): a
 * guest walk of the exit's own address before that makes it a shadow-paging
 * fault; a walk of another address (the emulator's) does not.
 *
 * ept/: on VMX with EPT, kvm:kvm_page_fault carries the exit qualification,
 * whose bit 3 is "readable", not PFERR_RSVD: such an exit is a fault.
 *
 * prefetch/, tdp/, error/: events whose struct kvm_page_fault and SPTE sit in
 * kernel memory (tests/tools/kcell.bpf.c), laid out as the running kernel's
 * BTF says. A prefetch (an async-PF completion) is no fault KVM takes, only
 * its fix counts; a TDP MMU write fault on a write-protected page is
 * WRITE_PROTECTED even when its SPTE did not change; a huge leaf installed
 * over a page table is fixed, whatever the 512 frozen children traced after
 * it; a negative return is the "error" outcome, not a bad RET_PF value.
 *
 * emulate/: an emulation after a page-fault exit whose fault requested no
 * SPTE is that fault's RET_PF_EMULATE only if it is of the same exit (the
 * vCPU's stat.exits, in a cell laid out as struct kvm_vcpu): one of a later
 * exit shows the fault was retried.
 *
 * Usage: bpfscenarios
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <bpf/btf.h>

#include "kvmmmu.h"
#include "kernel_btf.h"
#include "faults.skel.h"
#include "kcell.h"
#include "kcell.skel.h"
#include "mmu_lock.skel.h"

/* include/trace/events/lock.h */
#define LCB_F_SPIN (1U << 0)
#define LCB_F_READ (1U << 1)

#define MMU_LOCK 0xffff888012345678ULL /* the traced VM's kvm->mmu_lock */
#define OTHER_LOCK 0xffff8880abcdef00ULL
#define INNER_WAIT_NS 20000000ULL

static int failures;

/* PROG run once on raw_tp arguments ARGS (N of them). */
static int run_args(struct bpf_program *prog, __u64 *args, size_t n)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = n * sizeof(*args));
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);

	if (err)
		fprintf(stderr, "bpfscenarios: BPF_PROG_TEST_RUN %s: %s\n", bpf_program__name(prog),
			strerror(errno));
	return err;
}

static int run3(struct bpf_program *prog, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 args[3] = {a0, a1, a2};

	return run_args(prog, args, 3);
}

/*
 * kvmmmu:kvm_mmu_page_fault_done (kernel-patches/): vcpu, cr2_or_gpa, error_code, ret,
 * start_ns, goal_level, fast
 */
static int run_done_at(struct bpf_program *prog, __u64 ret, __u64 start_ns, __u64 goal_level,
		       __u64 fast)
{
	__u64 args[7] = {0, 0x1000, 0, ret, start_ns, goal_level, fast};

	return run_args(prog, args, 7);
}

/* ... a 4 KiB fault off the fast path */
static int run_done(struct bpf_program *prog, __u64 ret, __u64 start_ns)
{
	return run_done_at(prog, ret, start_ns, 1, 0);
}

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

static void expect(const char *name, bool ok, const char *what)
{
	printf("%s %s: %s\n", ok ? "PASS" : "FAIL", name, what);
	failures += !ok;
}

/* expect() with WHAT formatted. */
__attribute__((format(printf, 3, 4))) static void expectf(const char *name, bool ok,
							  const char *fmt, ...)
{
	char what[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	expect(name, ok, what);
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

static int lock_scenarios(void)
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

/* Writes this thread's faults entry with the fault state ST, as the faults object would. */
static int put_fault_state(int thread_stats_fd, const struct kvmmmu_fault_state *st)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};
	static struct kvmmmu_thread_stats s;

	memset(&s, 0, sizeof(s));
	s.id.ready = 1;
	s.id.vcpu_id = 0;
	s.st = *st;
	if (bpf_map_update_elem(thread_stats_fd, &key, &s, BPF_ANY)) {
		fprintf(stderr, "bpfscenarios: cannot write the faults entry: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
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
static int in_fault_scenarios(void)
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

/* kvm:kvm_page_fault as 6.1+ gives it: (vcpu, address, error_code) */
#define PF_EXIT_ERROR_CODE_ARG 2
#define PFERR_WRITE (1ULL << 1)
#define PFERR_GUEST_FINAL (1ULL << 32) /* an NPF: the address is a GPA */

/* RET_PF_* as 6.1..6.12 number them */
#define RET_PF_RETRY 1
#define RET_PF_EMULATE 2
#define RET_PF_FIXED 4
#define RET_PF_SPURIOUS 5

/* The faults object in tracepoint mode, timing 1 fault in SAMPLE_EVERY; VMX_EPT: as on Intel with
 * EPT. */
static int setup_faults_on(struct faults_bpf **out, __u32 sample_every, bool vmx_ept)
{
	struct faults_bpf *skel = faults_bpf__open();
	struct bpf_program *p;

	if (!skel) {
		fprintf(stderr, "bpfscenarios: cannot open the faults object: %s\n",
			strerror(errno));
		return -1;
	}
	bpf_object__for_each_program (p, skel->obj)
		bpf_program__set_autoload(p,
					  p == skel->progs.kvm_page_fault_raw ||
						  p == skel->progs.kvm_mmu_pagetable_walk_raw ||
						  p == skel->progs.kvm_userspace_exit_raw ||
						  p == skel->progs.kvm_emulate_insn_raw ||
						  p == skel->progs.kvm_mmu_spte_requested_raw ||
						  p == skel->progs.kvm_mmu_set_spte_raw ||
						  p == skel->progs.kvm_tdp_mmu_spte_changed_raw ||
						  p == skel->progs.kvm_mmu_page_fault_done_raw);
	skel->rodata->sample_every = sample_every;
	skel->rodata->pf_exit_rsvd_is_mmio = !vmx_ept;
	skel->rodata->ret_pf_retry = RET_PF_RETRY;
	skel->rodata->ret_pf_emulate = RET_PF_EMULATE;
	skel->rodata->ret_pf_write_protected = RET_PF_EMULATE;
	skel->rodata->ret_pf_fixed = RET_PF_FIXED;
	skel->rodata->ret_pf_spurious = RET_PF_SPURIOUS;
	skel->rodata->pf_exit_error_code_arg = PF_EXIT_ERROR_CODE_ARG;
	skel->rodata->tdp_mmu_param =
		0; /* the thread's VM: no TDP MMU, so not a shadow fault: direct */
	if (faults_bpf__load(skel)) {
		fprintf(stderr, "bpfscenarios: cannot load the faults object: %s\n",
			strerror(errno));
		faults_bpf__destroy(skel);
		return -1;
	}
	skel->bss->armed = true;
	*out = skel;
	return 0;
}

static int setup_faults(struct faults_bpf **out, __u32 sample_every)
{
	return setup_faults_on(out, sample_every, false);
}

/* This thread's faults by path, as the tracepoint model counted them. */
static void paths(struct faults_bpf *skel, __u64 *faults, __u64 *shadow, __u64 *direct)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};
	struct kvmmmu_thread_stats s;

	*faults = *shadow = *direct = 0;
	if (!bpf_map__lookup_elem(skel->maps.thread_stats, &key, sizeof(key), &s, sizeof(s), 0)) {
		*faults = s.counters[KVMMMU_FAULTS];
		*shadow = s.counters[KVMMMU_PATH_SHADOW];
		*direct = s.counters[KVMMMU_PATH_DIRECT];
	}
}

static int exit_walk_scenarios(void)
{
	struct bpf_program *exit_pf, *walk, *to_user;
	__u64 faults, shadow, direct;
	struct faults_bpf *skel;
	char what[128];

	if (setup_faults(&skel, 1))
		return -1;
	exit_pf = skel->progs.kvm_page_fault_raw;
	walk = skel->progs.kvm_mmu_pagetable_walk_raw;
	to_user = skel->progs.kvm_userspace_exit_raw;

	/* an NPF exit at a GPA, then the emulator walks the instruction's GVA */
	if (run3(exit_pf, 0, 0x10000000, PFERR_GUEST_FINAL | PFERR_WRITE) ||
	    run3(walk, 0x7fff0000, 0, 0) || run3(to_user, 0, 0, 0))
		goto err;
	paths(skel, &faults, &shadow, &direct);
	snprintf(what, sizeof(what), "faults %llu, path_shadow %llu, path_direct %llu",
		 (unsigned long long)faults, (unsigned long long)shadow,
		 (unsigned long long)direct);
	expect("exit-walk/emulator-walk-is-not-the-faults",
	       faults == 1 && shadow == 0 && direct == 1, what);

	/* a #PF exit at a GVA, then the shadow MMU walks that GVA: its own walk */
	if (run3(exit_pf, 0, 0x40001000, PFERR_WRITE) || run3(walk, 0x40001000, PFERR_WRITE, 0) ||
	    run3(to_user, 0, 0, 0))
		goto err;
	paths(skel, &faults, &shadow, &direct);
	snprintf(what, sizeof(what), "faults %llu, path_shadow %llu, path_direct %llu",
		 (unsigned long long)faults, (unsigned long long)shadow,
		 (unsigned long long)direct);
	expect("exit-walk/own-walk-is-shadow", faults == 2 && shadow == 1 && direct == 1, what);
	faults_bpf__destroy(skel);
	return 0;
err:
	faults_bpf__destroy(skel);
	return -1;
}

/*
 * Tracepoint mode: the emulator walks an MMIO address, KVM_RUN returns to
 * user space, and at re-entry the root reload waits for mmu_lock: that wait
 * is the thread's own, not a fault's.
 */
static int reload_lock_scenarios(void)
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

#define SAMPLED_FAULTS 400

/* NAME: SAMPLED_FAULTS faults, half of them timed in histogram HIST (binomial: 5 sd). */
static int expect_half_timed(struct faults_bpf *skel, const char *name, int hist)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};
	double sd = 0.5 * __builtin_sqrt(SAMPLED_FAULTS);
	struct kvmmmu_thread_stats s;
	char what[160];
	__u64 timed;

	if (bpf_map__lookup_elem(skel->maps.thread_stats, &key, sizeof(key), &s, sizeof(s), 0))
		return -1;
	timed = s.hist[hist].count;
	snprintf(what, sizeof(what), "%llu of %llu faults timed (expected %d +- %.0f)",
		 (unsigned long long)timed, (unsigned long long)s.counters[KVMMMU_FAULTS],
		 SAMPLED_FAULTS / 2, 5 * sd);
	expect(name,
	       s.counters[KVMMMU_FAULTS] == SAMPLED_FAULTS &&
		       __builtin_fabs((double)timed - SAMPLED_FAULTS / 2) <= 5 * sd,
	       what);
	return 0;
}

/*
 * --sample 2 in tracepoint mode, where timing starts at a guest walk: each
 * shadow-paging fault follows an emulator's walk (an MMIO access, say). Every
 * second walk would never be a fault's; 1 in 2 of the faults must be timed.
 * A fault here walks address 0 and requests its SPTE with a fault the
 * program cannot read (NULL: address 0), so the walk is its own.
 */
static int sample_scenarios(void)
{
	struct faults_bpf *skel;
	struct timespec now;

	if (setup_faults(&skel, 2))
		return -1;
	for (int i = 0; i < SAMPLED_FAULTS; i++)
		if (run3(skel->progs.kvm_mmu_pagetable_walk_raw, 0xfee00000, 0, 0) ||
		    run3(skel->progs.kvm_mmu_pagetable_walk_raw, 0, 0, 0) ||
		    run3(skel->progs.kvm_mmu_spte_requested_raw, 0, 0, 0) ||
		    run3(skel->progs.kvm_mmu_set_spte_raw, 1, 0, 0))
			goto err;
	if (expect_half_timed(skel, "sample/half-of-the-faults-timed", KVMMMU_HIST_WALK_TO_SPTE))
		goto err;
	faults_bpf__destroy(skel);

	/* the page-fault-done event's faults (TDP ones walk nothing): decided at the event */
	if (setup_faults(&skel, 2))
		return -1;
	for (int i = 0; i < SAMPLED_FAULTS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now); /* bpf_ktime_get_ns()'s clock */
		if (run_done(skel->progs.kvm_mmu_page_fault_done_raw, RET_PF_FIXED,
			     (__u64)now.tv_sec * 1000000000ULL + (__u64)now.tv_nsec))
			goto err;
	}
	if (expect_half_timed(skel, "sample/done-event-half-of-the-faults-timed",
			      KVMMMU_HIST_FAULT))
		goto err;
	faults_bpf__destroy(skel);
	return 0;
err:
	faults_bpf__destroy(skel);
	return -1;
}

/* This thread's figures in the faults object (zeros when it has no entry). */
static void thread_figures(struct faults_bpf *skel, struct kvmmmu_thread_stats *s)
{
	struct kvmmmu_thread_key key = {.tgid = getpid(), .tid = gettid()};

	if (bpf_map__lookup_elem(skel->maps.thread_stats, &key, sizeof(key), s, sizeof(*s), 0))
		memset(s, 0, sizeof(*s));
}

/* An EPT violation's exit qualification: a read of a present, readable page. */
#define EPT_QUAL_READ (1ULL << 0)
#define EPT_QUAL_READABLE (1ULL << 3)

static int ept_scenarios(void)
{
	static struct kvmmmu_thread_stats s;
	struct faults_bpf *skel;

	for (int vmx = 0; vmx <= 1; vmx++) {
		if (setup_faults_on(&skel, 1, vmx))
			return -1;
		/* the fault ends with no SPTE request: KVM_RUN returns (a retry) */
		if (run3(skel->progs.kvm_page_fault_raw, 0, 0x10000000,
			 EPT_QUAL_READ | EPT_QUAL_READABLE) ||
		    run3(skel->progs.kvm_userspace_exit_raw, 0, 0, 0)) {
			faults_bpf__destroy(skel);
			return -1;
		}
		thread_figures(skel, &s);
		/* SVM: bit 3 of an NPF's error code is PFERR_RSVD, an MMIO SPTE's exit */
		expectf(vmx ? "ept/readable-exit-is-a-fault" : "ept/svm-rsvd-exit-is-mmio",
			vmx ? s.counters[KVMMMU_FAULTS] == 1 && s.ret_pf[RET_PF_RETRY] == 1
			    : s.counters[KVMMMU_FAULTS] == 0,
			"faults %llu, ret_pf_retry %llu",
			(unsigned long long)s.counters[KVMMMU_FAULTS],
			(unsigned long long)s.ret_pf[RET_PF_RETRY]);
		/* its access kind from the qualification, not read as a PFERR code (bit 3: RSVD) */
		if (vmx)
			expectf("ept/exit-qualification-access",
				s.counters[KVMMMU_ACCESS_READ] == 1 &&
					s.counters[KVMMMU_ACCESS_PRESENT] == 1 &&
					s.counters[KVMMMU_ACCESS_UNKNOWN] == 0,
				"read %llu, present %llu, unknown %llu",
				(unsigned long long)s.counters[KVMMMU_ACCESS_READ],
				(unsigned long long)s.counters[KVMMMU_ACCESS_PRESENT],
				(unsigned long long)s.counters[KVMMMU_ACCESS_UNKNOWN]);
		faults_bpf__destroy(skel);
	}
	return 0;
}

/* Kernel memory the faults object reads as a struct kvm_page_fault, and an SPTE after it. */
struct kmem {
	struct kcell_bpf *skel;
	__u64 addr;					   /* the cell's kernel address */
	int off_addr, off_write, off_is_tdp, off_prefetch; /* this kernel's layout, in bytes */
	int off_exits;					   /* struct kvm_vcpu's stat.exits */
};
#define KMEM_SPTE 256 /* where the SPTE sits in the cell */

static int member_offset(const struct btf *btf, const struct btf_type *t, const char *name)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), name))
			return (int)(btf_member_bit_offset(t, i) / 8);
	return -1;
}

static int kmem_open(struct kmem *k)
{
	struct kernel_btf kb = {0};
	const struct btf_type *t;
	struct btf *btf;
	__u64 arg = 0;
	int id;

	memset(k, 0, sizeof(*k));
	if (kernel_btf_load(&kb) || !(btf = kernel_btf_kvm_types(&kb)) ||
	    (id = btf__find_by_name_kind(btf, "kvm_page_fault", BTF_KIND_STRUCT)) < 0) {
		fprintf(stderr, "bpfscenarios: no struct kvm_page_fault in the kernel's BTF\n");
		kernel_btf_free(&kb);
		return -1;
	}
	t = btf__type_by_id(btf, id);
	k->off_addr = member_offset(btf, t, "addr");
	k->off_write = member_offset(btf, t, "write");
	k->off_is_tdp = member_offset(btf, t, "is_tdp");
	k->off_prefetch = member_offset(btf, t, "prefetch");
	k->off_exits = -1;
	id = btf__find_by_name_kind(btf, "kvm_vcpu", BTF_KIND_STRUCT);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	if (t && member_offset(btf, t, "stat") >= 0) {
		int stat = member_offset(btf, t, "stat");
		const struct btf_member *m = btf_members(t);

		for (int i = 0; i < btf_vlen(t); i++)
			if (!strcmp(btf__name_by_offset(btf, m[i].name_off), "stat")) {
				const struct btf_type *st = btf__type_by_id(btf, m[i].type);
				int exits = st ? member_offset(btf, st, "exits") : -1;

				k->off_exits = exits < 0 ? -1 : stat + exits;
			}
	}
	kernel_btf_free(&kb);
	if (k->off_exits < 0 || k->off_exits + 8 > (int)sizeof(struct kcell)) {
		fprintf(stderr, "bpfscenarios: struct kvm_vcpu's stat.exits is not where a cell "
				"reaches\n");
		return -1;
	}
	if (k->off_addr < 0 || k->off_write < 0 || k->off_is_tdp < 0 || k->off_prefetch < 0 ||
	    k->off_prefetch >= KMEM_SPTE || k->off_is_tdp >= KMEM_SPTE) {
		fprintf(stderr,
			"bpfscenarios: struct kvm_page_fault lacks a member the tests set\n");
		return -1;
	}
	k->skel = kcell_bpf__open_and_load();
	if (!k->skel || run_args(k->skel->progs.where, &arg, 1) || !k->skel->bss->cell_addr) {
		fprintf(stderr, "bpfscenarios: no kernel memory cell (needs CAP_PERFMON)\n");
		kcell_bpf__destroy(k->skel);
		return -1;
	}
	k->addr = k->skel->bss->cell_addr;
	return 0;
}

/* The cell holds a fault at ADDR (its fields as given) and SPTE; returns the fault's address. */
static __u64 kmem_fault(struct kmem *k, __u64 addr, bool write, bool is_tdp, bool prefetch,
			__u64 spte)
{
	struct kcell cell = {0};
	__u32 zero = 0;

	memcpy(cell.bytes + k->off_addr, &addr, sizeof(addr));
	cell.bytes[k->off_write] = write;
	cell.bytes[k->off_is_tdp] = is_tdp;
	cell.bytes[k->off_prefetch] = prefetch;
	memcpy(cell.bytes + KMEM_SPTE, &spte, sizeof(spte));
	if (bpf_map__update_elem(k->skel->maps.cells, &zero, sizeof(zero), &cell, sizeof(cell), 0))
		return 0;
	return k->addr;
}

/* The cell holds a vCPU that has made EXITS VM exits; returns its address. */
static __u64 kmem_vcpu(struct kmem *k, __u64 exits)
{
	static struct kcell cell; /* 16 KiB: off the stack */
	__u32 zero = 0;

	memset(&cell, 0, sizeof(cell));
	memcpy(cell.bytes + k->off_exits, &exits, sizeof(exits));
	if (bpf_map__update_elem(k->skel->maps.cells, &zero, sizeof(zero), &cell, sizeof(cell), 0))
		return 0;
	return k->addr;
}

#define GFN 0x12340ULL
#define SPTE_PRESENT_RO 0x1ULL	     /* present, not writable */
#define SPTE_PAGE_TABLE 0x7ULL	     /* a non-leaf SPTE */
#define SPTE_HUGE_LEAF 0x80000087ULL /* a 2 MiB leaf */
#define FROZEN_6_1 0x5a0ULL
#define FROZEN_6_12 ((1ULL << 63) | 0x5a0ULL)

static int tdp_change(struct faults_bpf *skel, __u64 gfn, int level, __u64 old, __u64 new)
{
	__u64 args[5] = {0, gfn, (__u64)level, old, new};

	return run_args(skel->progs.kvm_tdp_mmu_spte_changed_raw, args, 5);
}

/* A fault requests its SPTE (FAULT: the struct's address), then the SPTE at SPTEP is set. */
static int request_and_set(struct faults_bpf *skel, __u64 fault, int level, __u64 gfn, __u64 sptep)
{
	return !fault || run3(skel->progs.kvm_mmu_spte_requested_raw, fault, 0, 0) ||
	       run3(skel->progs.kvm_mmu_set_spte_raw, (__u64)level, gfn, sptep);
}

/* A fresh faults object whose thread's VM uses the TDP MMU. */
static int setup_tdp(struct faults_bpf **skel)
{
	struct kvmmmu_fault_state tdp_vm = {.vm_mmu = 2};

	if (setup_faults(skel, 1))
		return -1;
	if (put_fault_state(bpf_map__fd((*skel)->maps.thread_stats), &tdp_vm)) {
		faults_bpf__destroy(*skel);
		return -1;
	}
	return 0;
}

static int fault_scenarios(void)
{
	static struct kvmmmu_thread_stats s;
	struct faults_bpf *skel = NULL;
	__u64 fault, paths;
	struct kmem k;

	if (kmem_open(&k))
		return -1;

	/* an async-PF completion: a prefetch, fixed */
	if (setup_faults(&skel, 1) ||
	    request_and_set(skel, fault = kmem_fault(&k, GFN << 12, false, false, true, 0), 1, GFN,
			    0))
		goto err;
	thread_figures(skel, &s);
	paths = s.counters[KVMMMU_PATH_DIRECT] + s.counters[KVMMMU_PATH_SHADOW] +
		s.counters[KVMMMU_PATH_TDP_MMU];
	expectf("prefetch/async-pf-fix-counts-as-fixed-only",
		s.counters[KVMMMU_FAULTS] == 0 && s.ret_pf[RET_PF_FIXED] == 1 && paths == 0,
		"faults %llu, ret_pf_fixed %llu, on a path %llu",
		(unsigned long long)s.counters[KVMMMU_FAULTS],
		(unsigned long long)s.ret_pf[RET_PF_FIXED], (unsigned long long)paths);
	/* one that sets nothing (its SPTE was right) counts nothing at all */
	if (run3(skel->progs.kvm_mmu_spte_requested_raw, fault, 0, 0) ||
	    run3(skel->progs.kvm_userspace_exit_raw, 0, 0, 0))
		goto err;
	thread_figures(skel, &s);
	expectf("prefetch/unset-counts-nothing",
		s.counters[KVMMMU_FAULTS] == 0 && s.ret_pf[RET_PF_SPURIOUS] == 0,
		"faults %llu, ret_pf_spurious %llu", (unsigned long long)s.counters[KVMMMU_FAULTS],
		(unsigned long long)s.ret_pf[RET_PF_SPURIOUS]);
	faults_bpf__destroy(skel);

	/* a TDP MMU write fault whose read-only SPTE stays as it was: write-protected */
	if (setup_tdp(&skel) ||
	    request_and_set(skel, kmem_fault(&k, GFN << 12, true, true, false, SPTE_PRESENT_RO), 1,
			    GFN, k.addr + KMEM_SPTE))
		goto err;
	thread_figures(skel, &s);
	expectf("tdp/unchanged-write-protected-is-write-protected",
		s.ret_pf[RET_PF_EMULATE] == 1 && s.ret_pf[RET_PF_SPURIOUS] == 0,
		"write_protected %llu, spurious %llu", (unsigned long long)s.ret_pf[RET_PF_EMULATE],
		(unsigned long long)s.ret_pf[RET_PF_SPURIOUS]);
	/* ... and a read fault on it, unchanged, is spurious */
	if (request_and_set(skel, kmem_fault(&k, GFN << 12, false, true, false, SPTE_PRESENT_RO), 1,
			    GFN, k.addr + KMEM_SPTE))
		goto err;
	thread_figures(skel, &s);
	expectf("tdp/unchanged-read-is-spurious", s.ret_pf[RET_PF_SPURIOUS] == 1, "spurious %llu",
		(unsigned long long)s.ret_pf[RET_PF_SPURIOUS]);
	faults_bpf__destroy(skel);

	/* a 2 MiB leaf over a page table, whose 512 children are frozen after it */
	for (int v = 0; v < 2; v++) {
		__u64 frozen = v ? FROZEN_6_12 : FROZEN_6_1;

		if (setup_tdp(&skel) ||
		    !(fault = kmem_fault(&k, GFN << 12, false, true, false, 0)) ||
		    run3(skel->progs.kvm_mmu_spte_requested_raw, fault, 0, 0) ||
		    tdp_change(skel, GFN, 2, SPTE_PAGE_TABLE, SPTE_HUGE_LEAF))
			goto err;
		for (int i = 0; i < 512; i++)
			if (tdp_change(skel, GFN + i, 1, SPTE_PRESENT_RO, frozen))
				goto err;
		if (run3(skel->progs.kvm_mmu_set_spte_raw, 2, GFN, 0))
			goto err;
		thread_figures(skel, &s);
		expectf(v ? "tdp/huge-leaf-over-table-is-fixed-6.12"
			  : "tdp/huge-leaf-over-table-is-fixed-6.1",
			s.ret_pf[RET_PF_FIXED] == 1 && s.ret_pf[RET_PF_SPURIOUS] == 0,
			"fixed %llu, spurious %llu", (unsigned long long)s.ret_pf[RET_PF_FIXED],
			(unsigned long long)s.ret_pf[RET_PF_SPURIOUS]);
		faults_bpf__destroy(skel);
	}

	/*
	 * A page-fault exit whose fault requests no SPTE, then an emulation:
	 * of the same exit (the vCPU's exit count unchanged), RET_PF_EMULATE;
	 * of a later one (an I/O string instruction's, two exits on), the
	 * fault had been retried.
	 */
	for (int later = 0; later < 2; later++) {
		__u64 vcpu, args[3];

		if (setup_faults(&skel, 1) || !(vcpu = kmem_vcpu(&k, 5)))
			goto err;
		args[0] = vcpu;
		args[1] = 0x10000000;
		args[2] = PFERR_GUEST_FINAL | PFERR_WRITE;
		if (run_args(skel->progs.kvm_page_fault_raw, args, 3) ||
		    (later && !kmem_vcpu(&k, 7)) ||
		    run3(skel->progs.kvm_emulate_insn_raw, vcpu, 0, 0))
			goto err;
		thread_figures(skel, &s);
		expectf(later ? "emulate/later-exits-emulation-leaves-a-retry"
			      : "emulate/same-exits-emulation-is-emulate",
			s.counters[KVMMMU_FAULTS] == 1 &&
				s.ret_pf[later ? RET_PF_RETRY : RET_PF_EMULATE] == 1 &&
				s.ret_pf[later ? RET_PF_EMULATE : RET_PF_RETRY] == 0,
			"faults %llu, retry %llu, emulate %llu",
			(unsigned long long)s.counters[KVMMMU_FAULTS],
			(unsigned long long)s.ret_pf[RET_PF_RETRY],
			(unsigned long long)s.ret_pf[RET_PF_EMULATE]);
		faults_bpf__destroy(skel);
	}

	/* a handler's negative return (-EFAULT), from the page-fault-done event */
	if (setup_faults(&skel, 1) ||
	    run_done(skel->progs.kvm_mmu_page_fault_done_raw, (__u64)-14LL, 0))
		goto err;
	thread_figures(skel, &s);
	expectf("error/negative-return-is-an-outcome",
		s.counters[KVMMMU_FAULTS] == 1 && s.ret_pf[KVMMMU_RET_PF_ERROR] == 1 &&
			skel->bss->health.bad_ret == 0,
		"faults %llu, error %llu, bad_ret %llu",
		(unsigned long long)s.counters[KVMMMU_FAULTS],
		(unsigned long long)s.ret_pf[KVMMMU_RET_PF_ERROR],
		(unsigned long long)skel->bss->health.bad_ret);
	faults_bpf__destroy(skel);

	/*
	 * the done event's fields: a fault the fast path fixed set no SPTE of
	 * its own; one fixed off it set its SPTE at its goal level; a retried
	 * one set none, whatever its goal level
	 */
	if (setup_faults(&skel, 1) ||
	    run_done_at(skel->progs.kvm_mmu_page_fault_done_raw, RET_PF_FIXED, 0, 1, 1) ||
	    run_done_at(skel->progs.kvm_mmu_page_fault_done_raw, RET_PF_FIXED, 0, 2, 0) ||
	    run_done_at(skel->progs.kvm_mmu_page_fault_done_raw, RET_PF_RETRY, 0, 1, 0))
		goto err;
	thread_figures(skel, &s);
	expectf("done/fast-path-and-goal-level",
		s.counters[KVMMMU_FAULTS] == 3 && s.counters[KVMMMU_PATH_FAST] == 1 &&
			s.counters[KVMMMU_PATH_DIRECT] == 2 &&
			s.counters[KVMMMU_LEVEL_INSTALLED_2M] == 1 &&
			s.counters[KVMMMU_LEVEL_INSTALLED_4K] == 0,
		"faults %llu, path_fast %llu, path_direct %llu, level_installed 2m %llu, 4k %llu",
		(unsigned long long)s.counters[KVMMMU_FAULTS],
		(unsigned long long)s.counters[KVMMMU_PATH_FAST],
		(unsigned long long)s.counters[KVMMMU_PATH_DIRECT],
		(unsigned long long)s.counters[KVMMMU_LEVEL_INSTALLED_2M],
		(unsigned long long)s.counters[KVMMMU_LEVEL_INSTALLED_4K]);
	faults_bpf__destroy(skel);
	kcell_bpf__destroy(k.skel);
	return 0;
err:
	faults_bpf__destroy(skel);
	kcell_bpf__destroy(k.skel);
	return -1;
}

int main(void)
{
	cpu_set_t one;

	/* every run on one CPU, as a spinning waiter's begin and end are */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		fprintf(stderr, "bpfscenarios: sched_setaffinity: %s\n", strerror(errno));
		return 2;
	}
	if (lock_scenarios() || in_fault_scenarios() || exit_walk_scenarios() ||
	    reload_lock_scenarios() || sample_scenarios() || ept_scenarios() || fault_scenarios())
		return 2;
	return failures ? 1 : 0;
}
