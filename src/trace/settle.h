/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracepoint model's last word on a fault whose SPTE was requested and
 * that nothing has ended yet, at the final reading of a running VM.
 */
#ifndef KVMMMU_SETTLE_H
#define KVMMMU_SETTLE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "kvmmmu.h"

/* What /proc shows of a thread while we wait on its pending request. */
struct thread_seen {
	char state;	  /* stat's state letter; 0 when the thread is gone */
	long long cpu_ns; /* schedstat's time on a CPU; -1 when unreadable */
	bool halted;	  /* asleep in KVM's halt (wchan kvm_vcpu_block/halt) */
};

enum settle_verdict {
	SETTLE_WAIT,	  /* nothing tells yet */
	SETTLE_IN_FLIGHT, /* the fault is still being handled: no outcome yet */
	SETTLE_SPURIOUS,  /* it ended with no SPTE set: what resolve_pending() says */
};

/* CPU time a thread may spend after its request before that fault is judged over. */
#define SETTLE_RAN_NS 10000000LL
#define SETTLE_MAX_MS 250

/*
 * The verdict on one pending request: MOVED when the thread set its SPTE or
 * made a new request since FIRST was seen, NOW what it is doing, WAITED_MS
 * how long we have waited.
 */
enum settle_verdict settle_judge(const struct thread_seen *first, const struct thread_seen *now,
				 bool moved, unsigned int waited_ms);

/* Reads what /proc shows of thread TID of TGID. */
void thread_seen_read(unsigned int tgid, unsigned int tid, struct thread_seen *seen);

/* Threads with a pending request at the final reading, and each verdict. */
#define SETTLE_MAX 256
struct settle {
	struct kvmmmu_thread_key key[SETTLE_MAX];
	__u64 requested[SETTLE_MAX]; /* its kvm_mmu_spte_requested count then */
	struct thread_seen first[SETTLE_MAX];
	enum settle_verdict verdict[SETTLE_MAX];
	size_t n;
	bool full; /* more were pending than SETTLE_MAX: the rest were not looked at */
};

/* Waits (at most SETTLE_MAX_MS) until each pending request in map FD has a verdict. */
void settle_pending(int fd, struct kvmmmu_thread_stats *scratch, struct settle *st);

/*
 * Whether K's request pending at the final reading, its REQUESTED-th, is in
 * flight: one settle_pending() judged so, or one made after it looked. ST
 * NULL: an exited thread's (never in flight).
 */
bool settle_in_flight(const struct settle *st, const struct kvmmmu_thread_key *k, __u64 requested);

#endif
