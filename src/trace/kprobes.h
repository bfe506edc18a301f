/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_KPROBES_H
#define KVMMMU_KPROBES_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "deathwatch.h"

/*
 * kprobes and kretprobes made through tracefs' kprobe_events, so that a
 * kretprobe gets the maxactive we choose and every probe's misses can be
 * read back from kprobe_profile. libbpf 1.1 attaches through the kprobe PMU,
 * which takes the kernel's default maxactive (max(10, 2 x CPUs)): with more
 * vCPUs than that inside a fault handler at once, exits go unseen and counts
 * fall short, silently.
 *
 * The events live in a group of their own, kvmmmu_<pid>; a helper process
 * removes them if we die without closing, even by SIGKILL.
 */
struct bpf_program;
struct bpf_link;

struct kprobe_event {
	char name[64]; /* event name in tracefs: [ret_]<function>_<pid> */
	bool retprobe;
};

struct kprobes {
	char group[32];
	unsigned int maxactive;
	struct kprobe_event *events;
	size_t n, cap;
	struct deathwatch janitor; /* removes them if we die; started at the first event */
};

/* The kernel's ceiling for a kretprobe's maxactive (KRETPROBE_MAXACTIVE_MAX). */
#define KPROBES_MAXACTIVE_MAX 4096

void kprobes_init(struct kprobes *k, unsigned int maxactive);
/*
 * Attaches PROG (SEC "kprobe/FUNC" or "kretprobe/FUNC") through tracefs,
 * falling back to libbpf's own attach where kprobe_events is not there.
 * NULL with errno set on failure.
 */
struct bpf_link *kprobes_attach(struct kprobes *k, struct bpf_program *prog);
/* Hits that ran no handler, over our events: kretprobe instances exhausted, or nested probes. */
__u64 kprobes_missed(const struct kprobes *k);
/* Removes the events; their links must be destroyed first. */
void kprobes_close(struct kprobes *k);

/* Parses one kprobe_profile line "  EVENT HITS MISSES"; false if it is not one. */
bool kprobes_parse_profile_line(const char *line, char *event, size_t len, __u64 *missed);

#endif
