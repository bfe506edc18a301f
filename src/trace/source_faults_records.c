// SPDX-License-Identifier: GPL-2.0
/*
 * The faults object's records beside its per-thread figures: the slow
 * faults of --slower (a ring buffer). The hot regions of --metric regions
 * are read in source_faults_regions.c.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "source_faults.h" /* first: the skeleton needs kvmmmu.h's types */
#include "faults.skel.h"
#include "log.h"
#include "map_iter.h"
#include "sysinfo.h"

/*
 * --stack: the N frames of IPS, named, innermost first and ';'-separated,
 * from the scheduler's caller on (the switch itself, __schedule and the
 * tracing below it, is the same in every one), without the tracers' own: a
 * BPF trampoline (fentry, ours or another tool's) and the call into it at
 * its function's start, which would show each probed function twice; NULL
 * when there is none, or no memory.
 */
static char *slow_stack(struct faults_source *fs, const __u64 *ips, size_t depth)
{
	size_t cap = 0, first = 0, n;
	char frame[256], *out = NULL;
	FILE *f;

	for (n = 0; n < depth && ips[n]; n++) {
		kernel_symbols_name(fs->ksyms, ips[n], frame, sizeof(frame));
		if (!strncmp(frame, "__schedule+", 11))
			first = n + 1;
	}
	if (first >= n)
		first = 0;
	f = open_memstream(&out, &cap);
	if (!f)
		return NULL;
	for (size_t i = first, shown = 0; i < n; i++) {
		size_t len;

		kernel_symbols_name(fs->ksyms, ips[i], frame, sizeof(frame));
		len = strlen(frame);
		if (len > 6 && !strcmp(frame + len - 6, " [bpf]")) {
			i++; /* the traced function's call into its trampoline */
			continue;
		}
		fprintf(f, "%s%s", shown++ ? ";" : "", frame);
	}
	if (fclose(f) || !out || !*out) {
		free(out);
		return NULL;
	}
	return out;
}

static int on_slow_fault(void *ctx, void *data, size_t len)
{
	struct faults_source *fs = ctx;
	const struct kvmmmu_slow_fault *r = data;
	const struct kvmmmu_slow_fault_stack *rs = data;
	char process[sizeof(r->process) + 1] = {};
	char *stack = NULL;
	const char *vm;

	if (len < sizeof(*r))
		return 0;
	/* bpf_get_stack() fills no more than the slot: the bound is the record's all the same */
	if (fs->opts->slow_stacks && len >= sizeof(*rs) && r->stack_len > 0)
		stack = slow_stack(fs, rs->ips,
				   (size_t)r->stack_len < sizeof(rs->ips)
					   ? (size_t)r->stack_len / sizeof(rs->ips[0])
					   : KVMMMU_STACK_DEPTH);
	memcpy(process, r->process, sizeof(r->process));
	vm = threads_vm_name(fs->threads, (int)r->tgid);
	slow_faults_append(&fs->slow, r,
			   threads_vm_index(fs->threads, (int)r->tgid, r->kvm, r->kvm_born),
			   vm ? vm : process, (double)r->ts_ns / 1e9 + fs->mono_to_wall, stack);
	return 0;
}

int faults_source_watch_slow(struct faults_source *fs)
{
	struct timespec mono;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	fs->mono_to_wall = sysinfo_now() - ((double)mono.tv_sec + (double)mono.tv_nsec / 1e9);
	err = threads_add_ring(fs->threads, bpf_map__fd(fs->skel->maps.slow_faults), on_slow_fault,
			       fs);
	if (err)
		elog("cannot read the slow-fault ring buffer: %s", strerror(-err));
	/* --stack: the frames' names, read now, not while records wait to be drained */
	if (!err && fs->opts->slow_stacks && !(fs->ksyms = kernel_symbols_load(NULL)))
		elog("warning: /proc/kallsyms: %s: stacks are shown as addresses, the "
		     "scheduler's and tracers' frames with them",
		     errno == ENOENT ? "no addresses shown (kptr_restrict)" : strerror(errno));
	return err;
}

int faults_source_take_slow(struct faults_source *fs, struct slow_faults *out)
{
	threads_consume(fs->threads); /* what BPF wrote since the last poll, too */
	return slow_faults_take(out, &fs->slow);
}
