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

#define STATS_RESCAN_S 1.0 /* how often a known VM's fds are looked at for new stats fds */
#define STATS_YOUNG_S 2.0  /* ... and every tick for this long after its first sighting */
#define MAX_TRACED 1024	   /* processes one look at /proc considers at once */
/* Descriptors kept free of KVM's stats fds (BPF objects, links, files, /proc). */
#define FD_RESERVE 256
#define CHILD_TERM_SECS 5 /* a command that outlives SIGTERM by this much is killed */

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
static bool fds_left(const struct session *s, size_t more)
{
	struct rlimit lim;
	size_t used = 0;

	if (getrlimit(RLIMIT_NOFILE, &lim) || lim.rlim_cur == RLIM_INFINITY)
		return true;
	for (size_t i = 0; i < s->n_kvm; i++)
		used += vm_stats_fds(&s->kvm[i]);
	return used + more + FD_RESERVE <= lim.rlim_cur;
}

/* Takes VMM V's stats fds that have appeared since (QEMU opens them as it is asked), or freezes V.
 */
static void kvm_stats_update(struct session *s, struct vm_stats *v, int pid)
{
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
	 * Its fds again, for stats fds opened since: every tick while the VM is
	 * young (a VMM opens its vCPUs' just after the VM's, and a short VM may
	 * be gone within the second), then once a second (QEMU opens them when
	 * asked). Reading every VM's /proc/PID/fd ten times a second was most
	 * of our CPU with 8 VMs.
	 */
	now = sysinfo_monotonic();
	if (v->pid == pid && now - v->first_scan > STATS_YOUNG_S &&
	    now - v->scanned_at < STATS_RESCAN_S)
		return;
	/*
	 * A process that holds several VMs: whose vCPU is a stats fd's is not
	 * told yet (snapshot_vm_kvm() shows none), and a duplicate of an early
	 * VM's fd would keep that VM alive: none are taken, those held go.
	 */
	if (threads_process_vms(&s->c.threads, pid) > 1) {
		if (v->pid == pid)
			vm_stats_freeze(v);
		else
			vm_stats_missed(v, pid);
		return;
	}
	/* A VMM that started after us made all its faults while we traced. */
	err = vm_stats_update(v, pid, start_ticks(pid) >= s->start_ticks); /* new PID: V reset */
	if (!v->first_scan)
		v->first_scan = now;
	v->scanned_at = now;
	if (err && err != -ENOENT && !s->kvm_err) {
		s->kvm_err = err;
		if (s->opts.kvm_stats_quiet)
			return;
		elog("note: KVM's own counters of pid %d are not readable (%s); showing kvmmmu's "
		     "only",
		     pid,
		     err == -EXDEV ? "the VMM has no KVM binary stats fd open to share"
				   : strerror(-err));
	}
}

/* A VM seen for the first time: its KVM counters, while it runs (a duplicate fd outlives it). */
static void kvm_stats_add(struct session *s, int pid)
{
	struct vm_stats *v;

	for (size_t i = 0; i < s->n_kvm; i++)
		if (s->kvm[i].pid == pid)
			return;
	/* one fd for the VM and one per vCPU: room for 64 vCPUs is asked */
	if (!fds_left(s, 65)) {
		if (!s->kvm_fd_note)
			elog("note: out of file descriptors for KVM's counters (RLIMIT_NOFILE): "
			     "pid "
			     "%d and later VMs show kvmmmu's only",
			     pid);
		s->kvm_fd_note = true;
		return;
	}
	v = array_grow(s->kvm, s->n_kvm + 1, &s->cap_kvm, sizeof(*v));
	if (!v)
		return;
	s->kvm = v;
	v = &s->kvm[s->n_kvm++];
	memset(v, 0, sizeof(*v)); /* pid 0: vm_stats_update() starts it for PID */
	kvm_stats_update(s, v, pid);
}

/*
 * KVM's counters of the VMs shown, through pidfd_getfd: those seen before
 * (new vCPU fds, or frozen once gone), and PIDS (N), first seen now.
 */
static void kvm_stats_tick(struct session *s, const int *pids, size_t n)
{
	bool all = !s->opts.n_specs && !s->opts.command;

	if (!s->opts.kvm_stats)
		return;
	for (size_t i = 0; i < s->n_kvm; i++)
		if (s->kvm[i].pid)
			kvm_stats_update(s, &s->kvm[i], s->kvm[i].pid);
	for (size_t i = 0; i < n; i++)
		if (all || session_is_traced(s, pids[i]))
			kvm_stats_add(s, pids[i]);
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

/* Forks COMMAND, held until release() so that its pid is traced before it runs. */
static int start_command(struct session *s)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	s->parent = getpid();
	s->child = fork();
	if (s->child < 0)
		return -errno;
	if (!s->child) {
		char go;

		/* never orphaned: if we die, even by SIGKILL, the command gets SIGTERM */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != s->parent)
			_exit(127);
		close(p[1]);
		/* with --csv -, stdout is the CSV's alone: the command's output joins our report */
		if (s->opts.command_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		if (read(p[0], &go, 1) != 1)
			_exit(127);
		execvp(s->opts.command[0], s->opts.command);
		fprintf(stderr, "kvmmmu-hist: cannot run '%s': %s\n", s->opts.command[0],
			strerror(errno));
		_exit(127);
	}
	close(p[0]);
	s->release_fd = p[1];
	return trace_pid(s, s->child);
}

static void release_command(struct session *s)
{
	if (s->release_fd > 0) {
		if (write(s->release_fd, "g", 1) != 1)
			elog("cannot start the command: %s", strerror(errno));
		close(s->release_fd);
		s->release_fd = -1;
	}
}

static bool command_done(struct session *s)
{
	if (s->child <= 0)
		return false;
	if (waitpid(s->child, &s->child_status, WNOHANG) == s->child) {
		s->child = 0;
		return true;
	}
	return false;
}

/* Ctrl-C or -d ended tracing first: stop the command as perf stat does, and make sure. */
static void stop_command(struct session *s)
{
	struct timespec step = {0, 10000000};

	if (s->child <= 0)
		return;
	s->child_stopped = true;
	kill(s->child, SIGTERM);
	for (int i = 0; i < CHILD_TERM_SECS * 100; i++) {
		if (waitpid(s->child, &s->child_status, WNOHANG) == s->child)
			goto reaped;
		nanosleep(&step, NULL);
	}
	elog("'%s' (pid %d) ignored SIGTERM for %d s: killed", s->opts.command[0], s->child,
	     CHILD_TERM_SECS);
	kill(s->child, SIGKILL);
	waitpid(s->child, &s->child_status, 0);
reaped:
	s->child = 0;
}

/* -p SPEC must name a running VM: a process with a KVM VM open. */
static int check_spec(const struct proc_spec *spec)
{
	int pids[MAX_TRACED], n = procs_find("/proc", spec, 1, getpid(), pids, MAX_TRACED);
	char comm[64];

	if (n <= 0) {
		if (spec->pid)
			elog("no process with PID %d", spec->pid);
		else
			elog("no process matches '%s' (use --wait to wait for it)", spec->text);
		return -ESRCH;
	}
	for (int i = 0; i < n; i++)
		if (proc_is_vmm("/proc", pids[i]))
			return 0;
	if (spec->pid) {
		proc_comm("/proc", spec->pid, 0, comm, sizeof(comm));
		elog("process %d (%s) is not a VM: it has no KVM VM open", spec->pid, comm);
	} else {
		elog("'%s' matches %d process%s, none of them a VM (no KVM VM open; --wait to "
		     "wait for one)",
		     spec->text, n, n == 1 ? "" : "es");
	}
	return -ENOENT;
}

/* Whether execvp() would find CMD (errno says why not). */
static bool command_exists(const char *cmd)
{
	const char *path = getenv("PATH");
	char full[4096];

	if (strchr(cmd, '/'))
		return !access(cmd, X_OK);
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");

		snprintf(full, sizeof(full), "%.*s/%s", (int)len, len ? p : ".", cmd);
		if (!access(full, X_OK))
			return true;
		p += len + (p[len] == ':');
	}
	errno = ENOENT;
	return false;
}

int session_check(const struct session_opts *opts)
{
	for (int i = 0; i < opts->n_specs; i++) {
		const struct proc_spec *spec = &opts->specs[i];
		int err;

		/* waiting, a name may yet appear, and a process may yet open its VM; a PID
		 * that is no process now never will be one */
		if (opts->wait && !(spec->pid && kill(spec->pid, 0) && errno == ESRCH))
			continue;
		err = check_spec(spec);
		if (err)
			return err;
	}
	if (opts->command && !command_exists(opts->command[0])) {
		int err = -errno;

		elog("cannot run '%s': %s", opts->command[0], strerror(-err));
		return err;
	}
	return 0;
}

int session_open(struct session *s, const struct session_opts *opts)
{
	struct collector_opts copts = {
		.mode = opts->mode,
		.attribution = opts->attribution,
		.filter_pids = opts->command || (opts->n_specs && !has_name_specs(opts)),
		/* `sudo qemu`, `timeout 60 qemu`, a script: the VMM is the command's child */
		.follow_forks = opts->command != NULL,
		.walk_hist = opts->walk_hist,
		.sample_every = opts->sample_every,
		.lock = opts->lock,
		.events = opts->events,
	};
	int pids[MAX_TRACED], running[MAX_TRACED], err;
	size_t n_pids = 0, n_running;

	memset(s, 0, sizeof(*s));
	s->opts = *opts;
	s->release_fd = -1;
	s->start_ticks = start_ticks(getpid());
	raise_fd_limit();
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
		err = start_command(s);
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
	for (size_t i = 0; i < s->n_kvm; i++)
		if (!s->kvm[i].from_zero)
			vm_stats_rebase(&s->kvm[i]);
	collector_arm(&s->c);
	s->armed_at = sysinfo_monotonic();
	return 0;
}

void session_start(struct session *s)
{
	release_command(s);
}

/*
 * A VM's first sighting is acted on at once, while it runs: its KVM stats
 * fds are taken then (a duplicate keeps its final counters readable after
 * it exits), however short it is.
 */
void session_wait(struct session *s, int timeout_ms)
{
	const int *pids;
	size_t n;

	if (timeout_ms > 0)
		collector_poll(&s->c, timeout_ms);
	collector_tick(&s->c);
	if (collector_timeline(&s->c)) /* a long run's timeline stays bounded */
		timeline_cap(collector_timeline(&s->c), &s->timeline_seen);
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
	return command_done(s) || targets_gone(s);
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
	for (size_t i = 0; i < s->n_kvm; i++) {
		int r = vm_stats_refresh(&s->kvm[i]);

		if (r && !s->kvm_refresh_note && !s->opts.kvm_stats_quiet)
			elog("note: KVM's counters of pid %d could not be read again (%s): "
			     "unavailable, not shown as those of an earlier reading",
			     s->kvm[i].pid, strerror(-r));
		s->kvm_refresh_note |= r != 0;
	}
	s->kvm_read_gap = sysinfo_monotonic() - read_at;
	if (!err)
		retain_traced(s, m);
	if (!final)
		forget_unselected(s);
	return err;
}

void session_mark(struct session *s)
{
	for (size_t i = 0; i < s->n_kvm; i++)
		vm_stats_mark(&s->kvm[i]);
}

void session_forget(struct session *s, int pid)
{
	size_t kept = 0;

	collector_forget_process(&s->c, pid, &s->timeline_seen);
	for (size_t i = 0; i < s->n_kvm; i++) {
		if (s->kvm[i].pid == pid) {
			vm_stats_close(&s->kvm[i]);
			continue;
		}
		s->kvm[kept++] = s->kvm[i];
	}
	s->n_kvm = kept;
	/* a long run's churn leaves freed heap behind: give it back, so memory stays flat */
	malloc_trim(0);
}

void session_held(const struct session *s, struct session_held *h)
{
	h->names = s->c.threads.n_names;
	h->retired_threads = s->c.faults.n_retired;
	h->timeline_events = s->c.events.timeline.n;
	h->kvm_counters = s->n_kvm;
}

void session_print_held_names(const struct session *s, FILE *f, const char *prefix, size_t max)
{
	for (size_t i = 0; i < s->c.threads.n_names && i < max; i++) {
		const struct thread_name *n = &s->c.threads.names[i];

		fprintf(f, "%s%d/%d %s%s\n", prefix, n->tgid, n->tid, n->comm,
			n->gone ? " (exited)" : "");
	}
}

void session_trim_timeline(struct session *s)
{
	struct timeline *t = collector_timeline(&s->c);

	if (t)
		s->timeline_seen -= timeline_trim(t, s->timeline_seen);
}

void session_stop(struct session *s)
{
	stop_command(s);
}

void session_close(struct session *s)
{
	if (s->release_fd >= 0)
		close(s->release_fd);
	collector_close(&s->c); /* also after a failed open: it frees what it had */
	for (size_t i = 0; i < s->n_kvm; i++)
		vm_stats_close(&s->kvm[i]);
	free(s->kvm);
	intset_free(&s->traced);
	intset_free(&s->not_vmms);
	memset(s, 0, sizeof(*s));
	s->release_fd = -1;
}
