// SPDX-License-Identifier: GPL-2.0
/*
 * The tracing session (session.h): the choice of VMs, the command run under
 * it, KVM's own counters, and the collector that reads kvmmmu's.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "session.h"
#include "array.h"
#include "log.h"
#include "sysinfo.h"

#define MAX_TRACED 1024 /* processes one look at /proc considers at once */

bool session_is_traced(const struct session *s, int pid)
{
	return intset_has(&s->traced, pid);
}

static int trace_pid(struct session *s, int pid)
{
	int err;

	if (session_is_traced(s, pid))
		return 0;
	if (s->c.opts.filter_pids) {
		err = collector_trace_pid(&s->c, pid);
		if (err)
			return err;
	}
	return intset_add(&s->traced, pid);
}

static bool has_name_specs(const struct session_opts *o)
{
	for (int i = 0; i < o->n_specs; i++)
		if (!o->specs[i].pid)
			return true;
	return false;
}

/*
 * Adds the processes -p names. PIDs are known up front and filtered in BPF;
 * names are matched against every VM the BPF side has seen (named by the
 * collector while they lived), so a VM that starts later is counted from its
 * first fault.
 */
static void find_targets(struct session *s, const int *pids, size_t n)
{
	for (int i = 0; i < s->opts.n_specs; i++)
		if (s->opts.specs[i].pid)
			trace_pid(s, s->opts.specs[i].pid);
	/* only processes first seen now: each is matched once, not at every tick */
	for (size_t i = 0; i < n; i++) {
		const char *comm = threads_process_name(&s->c.threads, pids[i]);
		const char *name = threads_vm_name(&s->c.threads, pids[i]);

		/*
		 * The command's descendants: the BPF filter, which their forks
		 * extend, is what let them be seen at all.
		 */
		if (s->opts.command && s->c.opts.follow_forks) {
			trace_pid(s, pids[i]);
			continue;
		}
		/* -p NAME: the process name, or the VM's (QEMU's -name, ...) */
		for (int k = 0; comm && k < s->opts.n_specs; k++)
			if (!s->opts.specs[k].pid &&
			    (proc_spec_matches(&s->opts.specs[k], pids[i], comm) ||
			     (name && proc_spec_matches(&s->opts.specs[k], pids[i], name))))
				trace_pid(s, pids[i]);
	}
}

/*
 * Showing every VM: a process first seen now that has no VM open is none,
 * though the probes saw it (compaction or reclaim zapping a VM's memory runs
 * in its context). Kept out of the report, as kernel threads are in BPF.
 * One that has exited cannot tell: it stays shown.
 */
static void find_non_vmms(struct session *s, const int *pids, size_t n)
{
	if (s->opts.n_specs || s->opts.command)
		return;
	for (size_t i = 0; i < n; i++) {
		/* only a look at its fds that found none says so (not one we may not take) */
		if (proc_has_vm("/proc", pids[i])) {
			intset_remove(&s->not_vmms, pids[i]); /* a pid reused by a VMM */
			continue;
		}
		if (!intset_has(&s->not_vmms, pids[i]) && !intset_add(&s->not_vmms, pids[i]))
			vlog("note: pid %d (%s) took MMU events but has no VM open: not a VM",
			     pids[i], threads_process_name(&s->c.threads, pids[i]) ?: "?");
	}
}

/* With only PIDs to trace, tracing ends when they have all exited. */
static bool targets_gone(const struct session *s)
{
	if (!s->opts.n_specs || has_name_specs(&s->opts) || s->opts.command || s->opts.wait)
		return false;
	for (size_t i = 0; i < s->traced.n; i++)
		if (!kill(s->traced.v[i], 0) || errno != ESRCH)
			return false;
	return true;
}

/* Drops the VMs that -p or the command did not ask for. */
static void retain_traced(const struct session *s, struct model *m)
{
	bool all = !s->opts.n_specs && !s->opts.command;
	size_t kept = 0;

	for (size_t i = 0; i < m->n_vms; i++) {
		/* every VM: any process the probes saw with a VM open, but ours (our own ioctls) */
		if (all ? m->vms[i].pid != getpid() && !intset_has(&s->not_vmms, m->vms[i].pid)
			: session_is_traced(s, m->vms[i].pid))
			m->vms[kept++] = m->vms[i];
		else
			free(m->vms[i].rows);
	}
	m->n_vms = kept;
}

/*
 * KVM's counters of the VMs shown, through pidfd_getfd: those seen before
 * (new vCPU fds, or frozen once gone), and PIDS (N), first seen now.
 */
static void kvm_stats_tick(struct session *s, const int *pids, size_t n)
{
	bool all = !s->opts.n_specs && !s->opts.command;
	int *shown = n ? malloc(n * sizeof(*shown)) : NULL;
	size_t n_shown = 0;

	if (!s->opts.kvm_stats || (n && !shown)) {
		free(shown);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (all || session_is_traced(s, pids[i]))
			shown[n_shown++] = pids[i];
	kvm_counts_tick(&s->kvm, &s->c.threads, shown, n_shown);
	free(shown);
}

/*
 * The VMs already running that this session shows (-p NAME, or every VM):
 * found in /proc now, so that KVM's baselines are read when counting starts,
 * not at each VM's first event a moment later (its first faults would be
 * kvmmmu's only). Returns how many went into PIDS (capacity MAX).
 */
static size_t running_vms(const struct session *s, int *pids, size_t max)
{
	int n;

	/* a command's VM starts after us; -p PIDs are taken as they are */
	if (!s->opts.kvm_stats || s->opts.command || (s->opts.n_specs && !has_name_specs(&s->opts)))
		return 0;
	n = procs_find_vmms("/proc", s->opts.specs, (size_t)s->opts.n_specs, getpid(), pids, max);
	return n > 0 ? (size_t)n : 0;
}

int session_open(struct session *s, const struct session_opts *opts)
{
	struct collector_opts copts = {
		.mode = opts->mode,
		.attribution = opts->attribution,
		.filter_pids = opts->command || (opts->n_specs && !has_name_specs(opts)),
		/* `sudo qemu`, `timeout 60 qemu`, a script: the VMM is the command's child */
		.follow_forks = opts->command != NULL,
		/* a slow fault's record says where its time went */
		.phases = opts->phases || opts->slower_ns,
		.slower_ns = opts->slower_ns,
		.slow_stacks = opts->slower_ns && opts->slow_stacks,
		.memslot_off = opts->memslot_off,
		.event_counts_off = opts->event_counts_off,
		.levels_off = opts->levels_off,
		.memslot_option = opts->memslot_option,
		.phases_option = opts->phases_option,
		.region_shift = opts->region_shift,
		.sample_every = opts->sample_every,
		.lock = opts->lock,
		.events = opts->events,
	};
	int pids[MAX_TRACED], running[MAX_TRACED], err;
	size_t n_pids = 0, n_running;

	memset(s, 0, sizeof(*s));
	s->opts = *opts;
	s->cmd.release_fd = -1;
	kvm_counts_init(&s->kvm, opts->kvm_stats_quiet);
	err = session_check(opts);
	if (err)
		return err;
	/* -p PIDs are in the BPF filter before anything attaches: none of their events is lost */
	for (int i = 0; i < opts->n_specs && n_pids < MAX_TRACED; i++)
		if (opts->specs[i].pid)
			pids[n_pids++] = opts->specs[i].pid;
	copts.pids = pids;
	copts.n_pids = n_pids;
	err = collector_open(&s->c, &copts);
	if (err)
		return err;
	if (opts->command) {
		pid_t pid = command_start(&s->cmd, opts->command, opts->command_stderr);

		err = pid < 0 ? (int)pid : trace_pid(s, pid);
		if (err) {
			elog("cannot start '%s': %s", opts->command[0], strerror(-err));
			return err;
		}
	}
	find_targets(s, NULL, 0);
	n_running = running_vms(s, running, MAX_TRACED);
	for (size_t i = 0; i < n_running && has_name_specs(opts); i++)
		trace_pid(s, running[i]);
	kvm_stats_tick(s, s->traced.v, s->traced.n); /* the stats fds of VMs already running */
	kvm_stats_tick(s, running, n_running);
	/* KVM's baselines and the start of counting, a few reads apart */
	kvm_counts_rebase(&s->kvm);
	collector_arm(&s->c);
	s->armed_at = sysinfo_monotonic();
	return 0;
}

void session_start(struct session *s)
{
	command_release(&s->cmd);
}

/*
 * A VM's first sighting is acted on at once, while it runs: its KVM stats
 * fds are taken then (a duplicate keeps its final counters readable after
 * it exits), however short it is.
 */
/*
 * --metric regions: each new timeline event ends its VM's epoch, whose
 * regions wait in the map apart: taken out as events come, and each
 * event's storm with them, not at the next report only.
 */
static void take_storms(struct session *s)
{
	struct timeline *t = collector_timeline(&s->c);

	if (!t || !t->n || t->events[t->n - 1].ev.ts_ns == s->storms_seen_ts)
		return;
	s->storms_seen_ts = t->events[t->n - 1].ev.ts_ns;
	if (!faults_source_fold_regions(&s->c.faults))
		faults_source_take_storms(&s->c.faults, t, s->timeline_seen);
}

void session_wait(struct session *s, int timeout_ms)
{
	const int *pids;
	size_t n;

	if (timeout_ms > 0)
		collector_poll(&s->c, timeout_ms);
	collector_tick(&s->c);
	if (collector_timeline(&s->c)) /* a long run's timeline stays bounded */
		timeline_cap(collector_timeline(&s->c), &s->timeline_seen);
	take_storms(s);
	n = threads_take_new(&s->c.threads, &pids);
	find_targets(s, pids, n);
	find_non_vmms(s, pids, n);
	kvm_stats_tick(s, pids, n);
}

int session_poll_fd(const struct session *s)
{
	return collector_poll_fd(&s->c);
}

bool session_done(struct session *s)
{
	return command_done(&s->cmd, s->opts.command ? s->opts.command[0] : "") || targets_gone(s);
}

/*
 * With a selection (-p, a command), a process that exited without being
 * selected (its name did not match) is never shown: it leaves at once.
 */
static void forget_unselected(struct session *s)
{
	int gone[64];
	size_t n = 0;

	if (!s->opts.n_specs && !s->opts.command)
		return;
	for (size_t i = 0; i < s->c.threads.n_names && n < sizeof(gone) / sizeof(gone[0]); i++) {
		const struct thread_name *p = &s->c.threads.names[i];

		if (!p->tid && p->gone && !session_is_traced(s, p->tgid))
			gone[n++] = p->tgid;
	}
	for (size_t i = 0; i < n; i++)
		session_forget(s, gone[i]);
}

int session_read(struct session *s, struct model *m, bool final)
{
	double read_at;
	int err;

	session_wait(s, 0);
	/* kvmmmu's figures, then KVM's at once: the closest two readings of a running VM get */
	read_at = sysinfo_monotonic();
	err = collector_read(&s->c, m, final); /* every object's figures */
	kvm_counts_refresh(&s->kvm);
	s->kvm_read_gap = sysinfo_monotonic() - read_at;
	if (!err)
		retain_traced(s, m);
	if (!final)
		forget_unselected(s);
	return err;
}

void session_mark(struct session *s)
{
	kvm_counts_mark(&s->kvm);
}

void session_forget(struct session *s, int pid)
{
	collector_forget_process(&s->c, pid, &s->timeline_seen);
	kvm_counts_forget(&s->kvm, pid);
	/* a long run's churn leaves freed heap behind: give it back, so memory stays flat */
	malloc_trim(0);
}

void session_held(const struct session *s, struct session_held *h)
{
	h->names = s->c.threads.n_names;
	h->retired_threads = s->c.faults.n_retired;
	h->timeline_events = s->c.events.timeline.n;
	h->kvm_counters = s->kvm.n;
}

void session_print_held_names(const struct session *s, FILE *f, const char *prefix, size_t max)
{
	for (size_t i = 0; i < s->c.threads.n_names && i < max; i++) {
		const struct thread_name *n = &s->c.threads.names[i];

		fprintf(f, "%s%d/%d %s%s\n", prefix, n->tgid, n->tid, n->comm,
			n->gone ? " (exited)" : "");
	}
}

int session_take_slow(struct session *s, struct slow_faults *out)
{
	/* BPF's pid filter already kept only the traced (-p PIDs, a command's tree) */
	bool all = s->c.opts.filter_pids || (!s->opts.n_specs && !s->opts.command);
	size_t from = out->n, kept = from;
	int err = faults_source_take_slow(&s->c.faults, out);

	/*
	 * -p NAME traces every process in BPF (a name is matched in user space):
	 * the slow faults of the VMs it does not select go, as their figures do
	 * (retain_traced)
	 */
	for (size_t i = from; i < out->n; i++) {
		if (all || session_is_traced(s, (int)out->items[i].rec.tgid))
			out->items[kept++] = out->items[i];
		else
			free(out->items[i].stack);
	}
	out->n = kept;
	return err;
}

void session_trim_timeline(struct session *s)
{
	struct timeline *t = collector_timeline(&s->c);

	if (t)
		s->timeline_seen -= timeline_trim(t, s->timeline_seen);
}

void session_stop(struct session *s)
{
	command_stop(&s->cmd, s->opts.command ? s->opts.command[0] : "");
}

void session_close(struct session *s)
{
	command_close(&s->cmd);
	collector_close(&s->c); /* also after a failed open: it frees what it had */
	kvm_counts_close(&s->kvm);
	intset_free(&s->traced);
	intset_free(&s->not_vmms);
	memset(s, 0, sizeof(*s));
	s->cmd.release_fd = -1;
}
