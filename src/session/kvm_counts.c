// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kvm_counts.h"
#include "array.h"
#include "log.h"
#include "sysinfo.h"

#define STATS_RESCAN_S 1.0  /* how often a known VM's fds are looked at for new stats fds */
#define STATS_YOUNG_S 2.0   /* ... and every tick for this long after its first sighting */
#define STATS_REREAD_S 10.0 /* ... and read in full at least this often when their number stays */
/* Descriptors kept free of KVM's stats fds (BPF objects, links, files, /proc). */
#define FD_RESERVE 256

/* Start time of PID in clock ticks since boot (/proc/PID/stat field 22), 0 if unknown. */
static unsigned long long start_ticks(int pid)
{
	unsigned long long ticks = 0;
	char path[64], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2,
		       "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		       "%*d %*d %llu",
		       &ticks);
	fclose(f);
	return ticks;
}

/* KVM's stats fds take one per vCPU of every VM: use what the hard limit allows. */
static void raise_fd_limit(void)
{
	struct rlimit lim;

	if (!getrlimit(RLIMIT_NOFILE, &lim) && lim.rlim_cur < lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_NOFILE, &lim);
	}
}

/* Whether a VM with up to NEW more fds fits under RLIMIT_NOFILE, with FD_RESERVE to spare. */
static bool fds_left(const struct kvm_counts *k, size_t more)
{
	struct rlimit lim;
	size_t used = 0;

	if (getrlimit(RLIMIT_NOFILE, &lim) || lim.rlim_cur == RLIM_INFINITY)
		return true;
	for (size_t i = 0; i < k->n; i++)
		used += vm_stats_fds(&k->v[i]);
	return used + more + FD_RESERVE <= lim.rlim_cur;
}

/* Takes VMM V's stats fds that have appeared since (QEMU opens them as it is asked), or freezes V.
 */
static void update(struct kvm_counts *k, const struct threads *threads, struct vm_stats *v, int pid)
{
	bool settled, from_zero;
	long long fds;
	double now;
	int err;

	if (v->frozen)
		return;
	if (kill(pid, 0)) {
		if (v->pid != pid)
			vm_stats_missed(v, pid); /* gone before its first look (a VM of a few ms) */
		else
			vm_stats_freeze(v); /* gone: the final values, then the fds go */
		return;
	}
	/*
	 * A process that holds several VMs: whose vCPU is a stats fd's is not
	 * told yet (snapshot_vm_kvm() shows none), and a duplicate of an early
	 * VM's fd would keep that VM alive: none are taken, those held go.
	 */
	if (threads_process_vms(threads, pid) > 1) {
		if (v->pid == pid)
			vm_stats_freeze(v);
		else
			vm_stats_missed(v, pid);
		return;
	}
	/*
	 * Its fds again, for stats fds opened since: every tick while the VM is
	 * young (a VMM opens its vCPUs' just after the VM's, and a short VM may
	 * be gone within the second), then once a second (QEMU opens them when
	 * asked). Reading every VM's /proc/PID/fd ten times a second was most
	 * of our CPU with 8 VMs; once a second, still three quarters of the
	 * exporter's upkeep with 8 VMs of 8 vCPUs. So a table whose number of
	 * fds has not changed is read again only every STATS_REREAD_S, unless
	 * the VM's own fds are gone (ours are to be let go: the next reads).
	 */
	now = sysinfo_monotonic();
	settled = v->pid == pid && now - v->first_scan > STATS_YOUNG_S;
	if (settled && now - v->scanned_at < STATS_RESCAN_S)
		return;
	v->scanned_at = now;
	/* counted before the read: an fd opened meanwhile changes the next count */
	fds = sysinfo_open_fds(pid);
	if (settled && fds && fds == v->open_fds && !v->refs_gone_at &&
	    now - v->read_at < STATS_REREAD_S)
		return;
	/* a new PID resets V; a VMM that started after us made all its faults while we traced */
	from_zero = v->pid == pid ? v->from_zero : start_ticks(pid) >= k->start_ticks;
	err = vm_stats_update(v, pid, from_zero);
	if (!v->first_scan)
		v->first_scan = now;
	v->scanned_at = v->read_at = now; /* V was reset for a new PID */
	v->open_fds = fds;
	if (err && err != -ENOENT && !k->err) {
		k->err = err;
		if (k->quiet)
			return;
		elog("note: KVM's own counters of pid %d are not readable (%s); showing kvmmmu's "
		     "only",
		     pid,
		     err == -EXDEV ? "the VMM has no KVM binary stats fd open to share"
				   : strerror(-err));
	}
}

/* A VM seen for the first time: its KVM counters, while it runs (a duplicate fd outlives it). */
static void add(struct kvm_counts *k, const struct threads *threads, int pid)
{
	struct vm_stats *v;

	if (kvm_counts_of(k, pid))
		return;
	/* one fd for the VM and one per vCPU: room for 64 vCPUs is asked */
	if (!fds_left(k, 65)) {
		if (!k->fd_note)
			elog("note: out of file descriptors for KVM's counters (RLIMIT_NOFILE): "
			     "pid "
			     "%d and later VMs show kvmmmu's only",
			     pid);
		k->fd_note = true;
		return;
	}
	v = array_grow(k->v, k->n + 1, &k->cap, sizeof(*v));
	if (!v)
		return;
	k->v = v;
	v = &k->v[k->n++];
	memset(v, 0, sizeof(*v)); /* pid 0: vm_stats_update() starts it for PID */
	update(k, threads, v, pid);
}

void kvm_counts_tick(struct kvm_counts *k, const struct threads *threads, const int *pids, size_t n)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].pid)
			update(k, threads, &k->v[i], k->v[i].pid);
	for (size_t i = 0; i < n; i++)
		add(k, threads, pids[i]);
}

void kvm_counts_init(struct kvm_counts *k, bool quiet)
{
	memset(k, 0, sizeof(*k));
	k->quiet = quiet;
	k->start_ticks = start_ticks(getpid());
	raise_fd_limit();
}

void kvm_counts_rebase(struct kvm_counts *k)
{
	for (size_t i = 0; i < k->n; i++)
		if (!k->v[i].from_zero)
			vm_stats_rebase(&k->v[i]);
}

void kvm_counts_refresh(struct kvm_counts *k)
{
	for (size_t i = 0; i < k->n; i++) {
		int r = vm_stats_refresh(&k->v[i]);

		if (r && !k->refresh_note && !k->quiet)
			elog("note: KVM's counters of pid %d could not be read again (%s): "
			     "unavailable, not shown as those of an earlier reading",
			     k->v[i].pid, strerror(-r));
		k->refresh_note |= r != 0;
	}
}

void kvm_counts_mark(struct kvm_counts *k)
{
	for (size_t i = 0; i < k->n; i++)
		vm_stats_mark(&k->v[i]);
}

struct vm_stats *kvm_counts_of(struct kvm_counts *k, int pid)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].pid == pid)
			return &k->v[i];
	return NULL;
}

void kvm_counts_forget(struct kvm_counts *k, int pid)
{
	size_t kept = 0;

	for (size_t i = 0; i < k->n; i++) {
		if (k->v[i].pid == pid) {
			vm_stats_close(&k->v[i]);
			continue;
		}
		k->v[kept++] = k->v[i];
	}
	k->n = kept;
}

void kvm_counts_close(struct kvm_counts *k)
{
	for (size_t i = 0; i < k->n; i++)
		vm_stats_close(&k->v[i]);
	free(k->v);
	memset(k, 0, sizeof(*k));
}
