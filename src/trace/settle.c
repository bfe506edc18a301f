// SPDX-License-Identifier: GPL-2.0
/*
 * Settling the tracepoint model's pending requests at the final reading.
 *
 * Under shadow paging a spurious fault traces its SPTE request and nothing
 * after it; the thread's next event says so. At the last reading of a VM
 * still running, a request with no event yet is either that (the vCPU went
 * back to its guest, or halted) or a fault still in hand, its SPTE moments
 * away or its thread preempted. KVM has counted the second taken but not
 * its outcome, and so must we. /proc tells them apart: a thread that ran
 * SETTLE_RAN_NS on a CPU, or sleeps in KVM's halt, has left its fault; one
 * that requested again meanwhile had its earlier fault ended by BPF and has
 * its new one in flight; one waiting for a CPU has not moved at all.
 */
#include <bpf/bpf.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "settle.h"
#include "sysinfo.h"

enum settle_verdict settle_judge(const struct thread_seen *first, const struct thread_seen *now,
				 bool moved, unsigned int waited_ms)
{
	if (moved)
		return SETTLE_IN_FLIGHT;
	/* gone, stopped (--validate) or dead: nothing follows its request */
	if (!now->state || strchr("TtZX", now->state))
		return SETTLE_SPURIOUS;
	if (now->halted)
		return SETTLE_SPURIOUS;
	if (first->cpu_ns < 0 || now->cpu_ns < 0) /* no schedstat: time alone must tell */
		return waited_ms >= 20 ? SETTLE_SPURIOUS : SETTLE_WAIT;
	if (now->cpu_ns - first->cpu_ns >= SETTLE_RAN_NS)
		return SETTLE_SPURIOUS;
	/* neither ran nor halted: waiting for a CPU, or asleep in the fault */
	return waited_ms >= SETTLE_MAX_MS ? SETTLE_IN_FLIGHT : SETTLE_WAIT;
}

void thread_seen_read(unsigned int tgid, unsigned int tid, struct thread_seen *seen)
{
	char path[64], buf[256], *p;

	memset(seen, 0, sizeof(*seen));
	seen->cpu_ns = -1;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", tgid, tid);
	if (!sysinfo_read_line(path, buf, sizeof(buf)) || !(p = strrchr(buf, ')')) || !p[1] ||
	    !p[2])
		return;
	seen->state = p[2];
	snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", tgid, tid);
	if (sysinfo_read_line(path, buf, sizeof(buf)) && sscanf(buf, "%lld", &seen->cpu_ns) != 1)
		seen->cpu_ns = -1;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/wchan", tgid, tid);
	if ((seen->state == 'S' || seen->state == 'D') && sysinfo_read_line(path, buf, sizeof(buf)))
		seen->halted =
			!strncmp(buf, "kvm_vcpu_block", 14) || !strncmp(buf, "kvm_vcpu_halt", 13);
}

void settle_pending(int fd, struct kvmmmu_thread_stats *s, struct settle *st)
{
	struct timespec tick = {0, 2000000};
	struct kvmmmu_thread_key k, next;
	struct thread_seen now;
	size_t waiting;
	int more;

	st->n = 0;
	st->full = false;
	for (more = !bpf_map_get_next_key(fd, NULL, &k); more; k = next) {
		more = !bpf_map_get_next_key(fd, &k, &next);
		if (bpf_map_lookup_elem(fd, &k, s) || !s->st.pending)
			continue;
		if (st->n == SETTLE_MAX) {
			st->full = true;
			break;
		}
		st->key[st->n] = k;
		st->requested[st->n] = s->counters[KVMMMU_SPTE_REQUESTED];
		thread_seen_read(k.tgid, k.tid, &st->first[st->n]);
		st->verdict[st->n++] = SETTLE_WAIT;
	}
	for (unsigned int waited = 0;; waited += 2) {
		waiting = 0;
		for (size_t i = 0; i < st->n; i++) {
			bool moved;

			if (st->verdict[i] != SETTLE_WAIT)
				continue;
			moved = bpf_map_lookup_elem(fd, &st->key[i], s) || !s->st.pending ||
				s->counters[KVMMMU_SPTE_REQUESTED] != st->requested[i];
			thread_seen_read(st->key[i].tgid, st->key[i].tid, &now);
			st->verdict[i] = settle_judge(&st->first[i], &now, moved, waited);
			waiting += st->verdict[i] == SETTLE_WAIT;
		}
		if (!waiting)
			return;
		nanosleep(&tick, NULL);
	}
}

bool settle_in_flight(const struct settle *st, const struct kvmmmu_thread_key *k, __u64 requested)
{
	if (!st)
		return false; /* an exited thread: nothing follows its last event */
	for (size_t i = 0; i < st->n; i++)
		if (st->key[i].tgid == k->tgid && st->key[i].tid == k->tid)
			return requested != st->requested[i] || st->verdict[i] == SETTLE_IN_FLIGHT;
	/*
	 * Not pending when settle_pending() looked, pending now: a request made
	 * since, between that look and this reading (a vCPU faulting 40,000
	 * times a second is mid-request a tenth of the time), so in flight.
	 * Unless settle stopped looking (over SETTLE_MAX pending): then, not
	 * judged, it is taken as spurious, as a halted vCPU's would be.
	 */
	return !st->full;
}
