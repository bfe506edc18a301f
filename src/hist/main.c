// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-hist: KVM MMU fault outcomes, paths and latency histograms per VM
 * and vCPU, from BPF, until Ctrl-C, -d, a count of intervals, or the end of
 * a command run under it.
 */
#include <errno.h>
#include <fcntl.h>
#include <bpf/libbpf.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "array.h"
#include "collector.h"
#include "csv.h"
#include "log.h"
#include "mmu_extras.h"
#include "procs.h"
#include "render.h"
#include "sysinfo.h"
#include "vcpu_map.h"
#include "vm_stats.h"

const char *log_prog = "kvmmmu-hist";
bool log_verbose;

#define TICK_MS 100	   /* longest wait for BPF's news: new threads wake us at once */
#define STATS_RESCAN_S 1.0 /* how often a known VM's fds are looked at for new stats fds */
#define STATS_YOUNG_S 2.0  /* ... and every tick for this long after its first sighting */
#define MAX_TRACED 1024	   /* processes one look at /proc considers at once */
/* Descriptors kept free of KVM's stats fds (BPF objects, links, files, /proc). */
#define FD_RESERVE 256

#define CHILD_TERM_SECS 5 /* a command that outlives SIGTERM by this much is killed */

static volatile sig_atomic_t exiting;
static volatile pid_t child_pid; /* for the signal handler: the command run under us */

struct hist_run {
	struct hist_env env;
	FILE *out; /* the text report: stdout, or stderr when the CSV goes to stdout */
	struct collector c;
	struct mmu_extras extras;
	struct render_opts ro;
	struct csv_writer csv;
	bool csv_open;
	int *traced; /* the VMs -p or the command selected, as they appear: unbounded */
	size_t cap_traced;
	size_t n_traced;
	pid_t child;
	pid_t parent; /* our pid, for the child to check that we still live */
	int child_status;
	int release_fd;	      /* the child execs once we write to it */
	struct vm_stats *kvm; /* KVM's counters, per VM seen: exited ones frozen, without fds */
	size_t n_kvm, cap_kvm;
	unsigned long long start_ticks; /* our start, in clock ticks since boot */
	int kvm_err;			/* why KVM's counters cannot be read, reported once */
	bool kvm_fd_note;		/* out of fds for them, reported once */
};

/*
 * The first SIGINT, SIGTERM or SIGHUP ends tracing and prints the summary. A
 * second one means "now": the command is killed and we leave at once (the
 * kernel detaches BPF programs as their links' fds close with us).
 */
static void on_signal(int sig)
{
	static const char msg[] = "kvmmmu-hist: second signal: exiting now, summary lost\n";

	if (!exiting) {
		exiting = sig;
		return;
	}
	if (child_pid > 0)
		kill(child_pid, SIGKILL);
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing left to tell it with */
	}
	_exit(128 + sig);
}

/* No SA_RESTART: a write into a pipe nobody reads must return to us on a signal. */
static void handle_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	/* output into a closed pipe (| head) is an EPIPE error, not a silent death */
	signal(SIGPIPE, SIG_IGN);
}

static int cmp_pid(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* r->traced is kept sorted: a long run traces thousands of VMs one after another. */
static bool is_traced(const struct hist_run *r, int pid)
{
	return r->n_traced && bsearch(&pid, r->traced, r->n_traced, sizeof(int), cmp_pid);
}

static int trace_pid(struct hist_run *r, int pid)
{
	int *t, err;
	size_t at;

	if (is_traced(r, pid))
		return 0;
	if (r->c.opts.filter_pids) {
		err = collector_trace_pid(&r->c, pid);
		if (err)
			return err;
	}
	t = array_grow(r->traced, r->n_traced + 1, &r->cap_traced, sizeof(*t));
	if (!t)
		return -ENOMEM;
	r->traced = t;
	for (at = r->n_traced; at > 0 && t[at - 1] > pid; at--)
		t[at] = t[at - 1];
	t[at] = pid;
	r->n_traced++;
	return 0;
}

static bool has_name_specs(const struct hist_env *env)
{
	for (int i = 0; i < env->n_specs; i++)
		if (!env->specs[i].pid)
			return true;
	return false;
}

/*
 * Adds the processes -p names. PIDs are known up front and filtered in BPF;
 * names are matched against every VM the BPF side has seen (named by the
 * collector while they lived), so a VM that starts later is counted from its
 * first fault.
 */
static void find_targets(struct hist_run *r, const int *pids, size_t n)
{
	for (int i = 0; i < r->env.n_specs; i++)
		if (r->env.specs[i].pid)
			trace_pid(r, r->env.specs[i].pid);
	/* only processes first seen now: each is matched once, not at every tick */
	for (size_t i = 0; i < n; i++) {
		const char *comm = collector_process_name(&r->c, pids[i]);

		for (int s = 0; comm && s < r->env.n_specs; s++)
			if (!r->env.specs[s].pid &&
			    proc_spec_matches(&r->env.specs[s], pids[i], comm))
				trace_pid(r, pids[i]);
	}
}

/* With only PIDs to trace, tracing ends when they have all exited. */
static bool targets_gone(const struct hist_run *r)
{
	if (!r->env.n_specs || has_name_specs(&r->env) || r->env.command || r->env.wait)
		return false;
	for (size_t i = 0; i < r->n_traced; i++)
		if (!kill(r->traced[i], 0) || errno != ESRCH)
			return false;
	return true;
}

/* Drops the VMs that -p or the command did not ask for. */
static void retain_traced(const struct hist_run *r, struct model *m)
{
	size_t kept = 0;

	if (!r->env.n_specs && !r->env.command)
		return;
	for (size_t i = 0; i < m->n_vms; i++) {
		if (is_traced(r, m->vms[i].pid))
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
static bool fds_left(const struct hist_run *r, size_t more)
{
	struct rlimit lim;
	size_t used = 0;

	if (getrlimit(RLIMIT_NOFILE, &lim) || lim.rlim_cur == RLIM_INFINITY)
		return true;
	for (size_t i = 0; i < r->n_kvm; i++)
		used += vm_stats_fds(&r->kvm[i]);
	return used + more + FD_RESERVE <= lim.rlim_cur;
}

/* Takes VMM V's stats fds that have appeared since (QEMU opens them as it is asked), or freezes V.
 */
static void kvm_stats_update(struct hist_run *r, struct vm_stats *v, int pid)
{
	double now;
	int err;

	if (v->frozen)
		return;
	if (kill(pid, 0)) {
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
	/* A VMM that started after us made all its faults while we traced. */
	err = vm_stats_update(v, pid, start_ticks(pid) >= r->start_ticks); /* new PID: V reset */
	if (!v->first_scan)
		v->first_scan = now;
	v->scanned_at = now;
	if (err && err != -ENOENT && !r->kvm_err) {
		r->kvm_err = err;
		elog("note: KVM's own counters of pid %d are not readable (%s); showing kvmmmu's "
		     "only",
		     pid,
		     err == -EXDEV ? "the VMM has no KVM binary stats fd open to share"
				   : strerror(-err));
	}
}

/* A VM seen for the first time: its KVM counters, while it runs (a duplicate fd outlives it). */
static void kvm_stats_add(struct hist_run *r, int pid)
{
	struct vm_stats *v;

	for (size_t i = 0; i < r->n_kvm; i++)
		if (r->kvm[i].pid == pid)
			return;
	/* one fd for the VM and one per vCPU: room for 64 vCPUs is asked */
	if (!fds_left(r, 65)) {
		if (!r->kvm_fd_note)
			elog("note: out of file descriptors for KVM's counters (RLIMIT_NOFILE): "
			     "pid "
			     "%d and later VMs show kvmmmu's only",
			     pid);
		r->kvm_fd_note = true;
		return;
	}
	v = array_grow(r->kvm, r->n_kvm + 1, &r->cap_kvm, sizeof(*v));
	if (!v)
		return;
	r->kvm = v;
	v = &r->kvm[r->n_kvm++];
	memset(v, 0, sizeof(*v)); /* pid 0: vm_stats_update() starts it for PID */
	kvm_stats_update(r, v, pid);
}

/*
 * KVM's counters of the VMs shown, through pidfd_getfd: those seen before
 * (new vCPU fds, or frozen once gone), and PIDS (N), first seen now.
 */
static void kvm_stats_tick(struct hist_run *r, const int *pids, size_t n)
{
	bool all = !r->env.n_specs && !r->env.command;

	if (!r->ro.show[SECTION_KVM] && !r->csv_open)
		return;
	for (size_t i = 0; i < r->n_kvm; i++)
		if (r->kvm[i].pid)
			kvm_stats_update(r, &r->kvm[i], r->kvm[i].pid);
	for (size_t i = 0; i < n; i++)
		if (all || is_traced(r, pids[i]))
			kvm_stats_add(r, pids[i]);
}

/* Forks COMMAND, held until release() so that its pid is traced before it runs. */
static int start_command(struct hist_run *r)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	r->parent = getpid();
	r->child = fork();
	if (r->child < 0)
		return -errno;
	if (!r->child) {
		char go;

		/* never orphaned: if we die, even by SIGKILL, the command gets SIGTERM */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != r->parent)
			_exit(127);
		close(p[1]);
		/* with --csv -, stdout is the CSV's alone: the command's output joins our report */
		if (r->out == stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		if (read(p[0], &go, 1) != 1)
			_exit(127);
		execvp(r->env.command[0], r->env.command);
		fprintf(stderr, "kvmmmu-hist: cannot run '%s': %s\n", r->env.command[0],
			strerror(errno));
		_exit(127);
	}
	close(p[0]);
	r->release_fd = p[1];
	child_pid = r->child;
	return trace_pid(r, r->child);
}

static void release_command(struct hist_run *r)
{
	if (r->release_fd > 0) {
		if (write(r->release_fd, "g", 1) != 1)
			elog("cannot start the command: %s", strerror(errno));
		close(r->release_fd);
		r->release_fd = -1;
	}
}

static bool command_done(struct hist_run *r)
{
	if (r->child <= 0)
		return false;
	if (waitpid(r->child, &r->child_status, WNOHANG) == r->child) {
		r->child = 0;
		child_pid = 0;
		return true;
	}
	return false;
}

/* Ctrl-C or -d ended tracing first: stop the command as perf stat does, and make sure. */
static void stop_command(struct hist_run *r)
{
	struct timespec step = {0, 10000000};

	if (r->child <= 0)
		return;
	kill(r->child, SIGTERM);
	for (int i = 0; i < CHILD_TERM_SECS * 100; i++) {
		if (waitpid(r->child, &r->child_status, WNOHANG) == r->child)
			goto reaped;
		nanosleep(&step, NULL);
	}
	elog("'%s' (pid %d) ignored SIGTERM for %d s: killed", r->env.command[0], r->child,
	     CHILD_TERM_SECS);
	kill(r->child, SIGKILL);
	waitpid(r->child, &r->child_status, 0);
reaped:
	r->child = 0;
	child_pid = 0;
}

static void print_timestamp(FILE *out)
{
	char buf[16];
	time_t t = time(NULL);
	struct tm tm;

	strftime(buf, sizeof(buf), "%H:%M:%S", localtime_r(&t, &tm));
	fprintf(out, "\n%-8s\n", buf);
}

/* Prints and exports one report: DELTA for text, TOTAL for CSV (cumulative, like counters). */
static int report(struct hist_run *r, struct model *prev, bool final)
{
	struct model total = {}, delta = {};
	const int *pids;
	double read_at;
	size_t n;
	int err;

	collector_tick(&r->c);
	n = collector_take_new(&r->c, &pids);
	find_targets(r, pids, n);
	kvm_stats_tick(r, pids, n);
	/* kvmmmu's figures, then KVM's at once: the closest two readings of a running VM get */
	read_at = sysinfo_monotonic();
	err = collector_read(&r->c, &total, final);
	for (size_t i = 0; i < r->n_kvm; i++)
		vm_stats_refresh(&r->kvm[i]);
	r->ro.kvm_read_gap = sysinfo_monotonic() - read_at;
	if (!err)
		err = mmu_extras_read(&r->extras, &r->c, &total);
	if (err)
		return err;
	retain_traced(r, &total);
	r->ro.kvm = r->kvm;
	r->ro.n_kvm = r->n_kvm;
	/* interval reports show KVM's counts over the interval too; the summary, the whole run */
	r->ro.kvm_since_mark = !final && prev;
	if (!final && prev) {
		err = model_delta(&delta, &total, prev);
		if (err)
			goto out;
	}
	if (r->env.timestamp)
		print_timestamp(r->out);
	r->ro.hide_idle = !final;
	render_text(r->out, final || !prev ? &total : &delta, &r->ro);
	r->ro.timeline_from = r->extras.n_timeline; /* each event is printed once */
	for (size_t i = 0; i < r->n_kvm; i++)
		vm_stats_mark(&r->kvm[i]); /* the next interval starts here */
	if (fflush(r->out) && errno == EPIPE)
		exiting = SIGPIPE; /* nobody reads the report: end, but finish the CSV */
	if (r->csv_open) {
		/* each report reaches the file whole, in one write */
		err = render_csv(&r->csv, &total, &r->ro, sysinfo_now());
		if (!err)
			err = csv_writer_flush(&r->csv);
		if (err)
			elog("cannot write '%s': %s", r->env.csv_path, strerror(-err));
	}
	if (prev) {
		model_free(prev);
		model_copy(prev, &total);
	}
out:
	model_free(&delta);
	model_free(&total);
	return err;
}

/* --vcpu N must name a vCPU of a traced VM: checked against their kvm-vcpu fds. */
static int check_vcpu(struct hist_run *r, const struct model *final)
{
	if (r->env.vcpu < 0)
		return 0;
	for (size_t i = 0; i < r->n_traced; i++) {
		int ids[512], n = vcpu_fds("/proc", r->traced[i], ids, 512);

		for (int k = 0; k < n; k++)
			if (ids[k] == r->env.vcpu)
				return 0;
	}
	for (size_t i = 0; final && i < final->n_vms; i++)
		for (size_t k = 0; k < final->vms[i].n_rows; k++)
			if (final->vms[i].rows[k].vcpu == r->env.vcpu)
				return 0;
	return -ENOENT;
}

/*
 * Waits for news from BPF or the next tick. A VM's first sighting is acted on
 * at once, while it runs: its KVM stats fds are taken then (a duplicate keeps
 * its final counters readable after it exits), however short it is.
 */
/* Whether the reader of OUT has gone (| head -1): a pipe's write end then polls POLLERR. */
static bool output_closed(FILE *out)
{
	struct pollfd p = {.fd = fileno(out), .events = 0};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

static void wait_tick(struct hist_run *r)
{
	const int *pids;

	if (output_closed(r->out))
		exiting = SIGPIPE;
	size_t n;

	collector_poll(&r->c, TICK_MS);
	collector_tick(&r->c);
	n = collector_take_new(&r->c, &pids);
	find_targets(r, pids, n);
	kvm_stats_tick(r, pids, n);
}

static int run(struct hist_run *r)
{
	const double start = sysinfo_monotonic();
	double next_report = start + r->env.interval;
	struct model prev = {};
	long reports = 0;
	int err = 0;

	while (!exiting) {
		double now;

		wait_tick(r);
		now = sysinfo_monotonic();
		if (command_done(r) || targets_gone(r))
			break;
		if (r->env.duration && now - start >= r->env.duration)
			break;
		if (r->env.interval && now >= next_report) {
			err = report(r, &prev, false);
			if (err)
				break;
			next_report += r->env.interval;
			if (r->env.count && ++reports >= r->env.count)
				break;
		}
	}
	model_free(&prev);
	return err;
}

/* -p SPEC must name a running VM: a process with a KVM VM open. */
static int check_spec(const struct proc_spec *spec)
{
	int pids[MAX_TRACED], n = procs_find("/proc", spec, 1, getpid(), pids, MAX_TRACED);
	char comm[64];

	if (n <= 0) {
		elog("no process %s '%s' (use --wait to wait for it)",
		     spec->pid ? "with PID" : "matches", spec->text);
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

/* --vcpu N names a vCPU (a kvm-vcpu fd) of some VM that -p (or, without -p, anything) selects. */
static bool vcpu_exists(const struct hist_run *r)
{
	static int pids[MAX_TRACED];
	int n = 0;

	for (int i = 0; i < r->env.n_specs; i++) {
		int found = procs_find("/proc", &r->env.specs[i], 1, getpid(), pids + n,
				       MAX_TRACED - (size_t)n);

		n += found > 0 ? found : 0;
	}
	if (!r->env.n_specs)
		return true; /* any VM, now or later: checked at the end */
	for (int i = 0; i < n; i++) {
		int ids[512], k = vcpu_fds("/proc", pids[i], ids, 512);

		for (int j = 0; j < k; j++)
			if (ids[j] == r->env.vcpu)
				return true;
	}
	return false;
}

static int setup(struct hist_run *r)
{
	struct collector_opts copts = {
		.mode = r->env.mode,
		.attribution = r->env.attribution,
		.filter_pids = r->env.command || (r->env.n_specs && !has_name_specs(&r->env)),
		.walk_hist = r->env.show[SECTION_HIST0 + KVMMMU_HIST_WALK],
		.sample_every = r->env.sample_every,
	};
	int pids[MAX_TRACED], err;
	size_t n_pids = 0;

	for (int i = 0; i < r->env.n_specs && !r->env.wait; i++) {
		err = check_spec(&r->env.specs[i]);
		if (err)
			return err;
	}
	if (r->env.command && !command_exists(r->env.command[0])) {
		elog("cannot run '%s': %s", r->env.command[0], strerror(errno));
		return -errno;
	}
	if (r->env.vcpu >= 0 && !r->env.command && !r->env.wait && !vcpu_exists(r)) {
		elog("vCPU %d does not exist in the traced VMs", r->env.vcpu);
		return -ENOENT;
	}
	if (r->env.csv_path) {
		const struct csv_meta meta = {.tool = "kvmmmu-hist",
					      .label = r->env.label,
					      .command_line = r->env.command_line};

		err = csv_writer_open(&r->csv, r->env.csv_path, &meta);
		if (err) {
			elog("cannot write '%s': %s", r->env.csv_path, strerror(-err));
			return err;
		}
		r->csv_open = true;
	}
	/* -p PIDs are in the BPF filter before anything attaches: none of their events is lost */
	for (int i = 0; i < r->env.n_specs && n_pids < MAX_TRACED; i++)
		if (r->env.specs[i].pid)
			pids[n_pids++] = r->env.specs[i].pid;
	copts.pids = pids;
	copts.n_pids = n_pids;
	err = collector_open(&r->c, &copts);
	if (err)
		return err;
	r->ro.c = &r->c;
	/* the lock and lifecycle probes cost events too: only when their figures are shown */
	mmu_extras_open(&r->extras, &r->c, r->env.show[SECTION_LOCK],
			r->env.show[SECTION_MMU] || r->env.show[SECTION_TIMELINE]);
	r->ro.extras = &r->extras;
	if (r->env.command) {
		err = start_command(r);
		if (err) {
			elog("cannot start '%s': %s", r->env.command[0], strerror(-err));
			return err;
		}
	}
	find_targets(r, NULL, 0);
	kvm_stats_tick(r, r->traced, r->n_traced); /* the stats fds of VMs already running */
	/* KVM's baselines and the start of counting, a few reads apart */
	for (size_t i = 0; i < r->n_kvm; i++)
		if (!r->kvm[i].from_zero)
			vm_stats_rebase(&r->kvm[i]);
	collector_arm(&r->c);
	return 0;
}

int main(int argc, char **argv)
{
	static struct hist_run r;
	struct model final = {};
	int err;

	/* whole reports per write(2): each report, and the header, ends with fflush() */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	hist_parse_args(argc, argv, &r.env);
	/* stdout carries nothing but CSV with --csv - */
	r.out = r.env.csv_path && !strcmp(r.env.csv_path, "-") ? stderr : stdout;
	handle_signals();
	log_verbose = r.env.verbose;
	libbpf_set_print(log_libbpf);
	r.ro = (struct render_opts){
		.per_vcpu = r.env.per_vcpu,
		.only_vcpu = r.env.vcpu,
		.unit_ns = r.env.unit_ns,
		.unit = r.env.unit,
	};
	memcpy(r.ro.show, r.env.show, sizeof(r.ro.show));
	r.release_fd = -1;
	r.start_ticks = start_ticks(getpid());
	raise_fd_limit();
	if (geteuid() != 0)
		elog("warning: not root; loading BPF needs CAP_BPF and CAP_PERFMON");

	err = setup(&r);
	if (err)
		goto cleanup;
	fprintf(r.out, "Tracing KVM MMU faults");
	if (r.env.command)
		fprintf(r.out, " of '%s'", r.env.command[0]);
	else if (r.env.n_specs)
		fprintf(r.out, " of the processes -p selects");
	fprintf(r.out, "... %s\n", r.env.command ? "" : "Hit Ctrl-C to end.");
	render_probe_header(r.out, &r.ro);
	render_unavailable(stderr,
			   &r.ro); /* what this kernel cannot give: for the user, not the data */
	if (fflush(r.out) && errno == EPIPE)
		exiting = SIGPIPE; /* | head -1: nobody wants more */
	release_command(&r);

	err = run(&r);
	stop_command(&r);
	if (!err) {
		fprintf(r.out, "\n%s\n", r.env.interval ? "Summary (whole run):" : "Summary:");
		err = report(&r, NULL, true);
	}
	if (!err && r.env.vcpu >= 0) {
		collector_read(&r.c, &final, true);
		if (check_vcpu(&r, &final)) {
			elog("vCPU %d does not exist in the traced VMs", r.env.vcpu);
			err = -ENOENT;
		}
		model_free(&final);
	}
	if (!err && r.env.command && WIFEXITED(r.child_status) && WEXITSTATUS(r.child_status)) {
		elog("'%s' exited with status %d", r.env.command[0], WEXITSTATUS(r.child_status));
		err = -ECHILD;
	}
cleanup:
	if (r.csv_open && csv_writer_close(&r.csv) && !err) {
		elog("cannot write '%s': %s", r.env.csv_path, strerror(EIO));
		err = -EIO;
	}
	mmu_extras_close(&r.extras);
	collector_close(&r.c);
	for (size_t i = 0; i < r.n_kvm; i++)
		vm_stats_close(&r.kvm[i]);
	free(r.kvm);
	for (int i = 0; i < r.env.n_specs; i++)
		proc_spec_free(&r.env.specs[i]);
	free(r.env.command_line);
	free(r.traced);
	return err ? 1 : 0;
}
