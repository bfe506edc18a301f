/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Log-linear latency buckets, shared by the BPF programs (which fill them)
 * and user space (which prints them and computes percentiles).
 *
 * Values 0..3 ns get a bucket each; from 4 ns on, every power of two is split
 * into KVMMMU_HIST_SUB equal sub-buckets, so a bucket's width is at most a
 * quarter of its lower bound (relative error <= 25%).
 */
#ifndef KVMMMU_HIST_H
#define KVMMMU_HIST_H

#define KVMMMU_HIST_SUB_BITS 2
#define KVMMMU_HIST_SUB (1 << KVMMMU_HIST_SUB_BITS)
/* Values from 2^41 ns (~36 minutes) on share the last bucket. */
#define KVMMMU_HIST_MAX_LOG2 40
#define KVMMMU_HIST_BUCKETS                                                                        \
	(KVMMMU_HIST_SUB + (KVMMMU_HIST_MAX_LOG2 - KVMMMU_HIST_SUB_BITS + 1) * KVMMMU_HIST_SUB)

struct kvmmmu_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 max_ns;
	__u64 slots[KVMMMU_HIST_BUCKETS];
};

/* floor(log2(v)) for v > 0, branch-only so the BPF verifier sees no loop. */
static inline __u32 kvmmmu_log2(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5;
	v >>= shift;
	r |= shift;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static inline __u32 kvmmmu_hist_slot(__u64 v)
{
	__u32 e, slot;

	if (v < KVMMMU_HIST_SUB)
		return (__u32)v;
	e = kvmmmu_log2(v);
	if (e > KVMMMU_HIST_MAX_LOG2)
		return KVMMMU_HIST_BUCKETS - 1;
	slot = KVMMMU_HIST_SUB + (e - KVMMMU_HIST_SUB_BITS) * KVMMMU_HIST_SUB +
	       (__u32)((v >> (e - KVMMMU_HIST_SUB_BITS)) & (KVMMMU_HIST_SUB - 1));
	return slot;
}

/* Smallest value that falls into SLOT. */
static inline __u64 kvmmmu_hist_slot_low(__u32 slot)
{
	__u32 e, sub;

	if (slot < KVMMMU_HIST_SUB)
		return slot;
	e = (slot - KVMMMU_HIST_SUB) / KVMMMU_HIST_SUB + KVMMMU_HIST_SUB_BITS;
	sub = (slot - KVMMMU_HIST_SUB) % KVMMMU_HIST_SUB;
	return (__u64)(KVMMMU_HIST_SUB + sub) << (e - KVMMMU_HIST_SUB_BITS);
}

/* Largest value that falls into SLOT (the last slot is open-ended). */
static inline __u64 kvmmmu_hist_slot_high(__u32 slot)
{
	if (slot + 1 >= KVMMMU_HIST_BUCKETS)
		return ~0ULL;
	return kvmmmu_hist_slot_low(slot + 1) - 1;
}

#endif
