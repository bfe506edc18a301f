/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --metric regions: the traced VMs' faults per memslot and guest-physical
 * region (1 GiB, or --region's size), since tracing started. Plain data.
 */
#ifndef KVMMMU_REGIONS_H
#define KVMMMU_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct region_count {
	int pid;
	int vm_index; /* which of the process's VMs (1: its first) */
	__s32 slot;   /* the memslot's id; -1: not known (a fast-path fault) */
	__u32 epoch;  /* a storm's: the VM's timeline events before its faults; else 0 */
	__u64 base;   /* the region's first GPA */
	__u64 faults;
};

struct regions {
	struct region_count *items;
	size_t n, cap;
	__u64 size; /* bytes a region; 0: not counted */
};

/* Appends one region's count; 0 or -ENOMEM. */
int regions_add(struct regions *r, const struct region_count *c);
/* Appends SRC's counts; 0 or -ENOMEM. */
int regions_add_all(struct regions *r, const struct regions *src);
/* One count per VM, epoch, memslot and region, in that order: equal ones are added up. */
void regions_merge(struct regions *r);
/* Keeps the counts KEEP(C, CTX) says to keep; returns how many went. */
size_t regions_filter(struct regions *r, bool (*keep)(const struct region_count *c, void *ctx),
		      void *ctx);
/* VM (PID, VM_INDEX)'s regions, most faults first, into OUT (at most MAX): how many. */
size_t regions_top(const struct regions *r, int pid, int vm_index, const struct region_count **out,
		   size_t max);
/* The same VM's faults in all its regions. */
__u64 regions_vm_total(const struct regions *r, int pid, int vm_index);
int regions_copy(struct regions *dst, const struct regions *src);
void regions_free(struct regions *r);

#endif
