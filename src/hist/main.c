// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-hist: KVM MMU fault outcomes, paths and latency histograms per VM
 * and vCPU, from BPF, until Ctrl-C, -d, a count of intervals, or the end of
 * a command run under it.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "csv.h"
#include "log.h"
#include "render.h"
#include "session.h"
#include "sysinfo.h"

const char *log_prog = "kvmmmu-hist";
bool log_verbose;

#define TICK_MS 100 /* longest wait for BPF's news: new threads wake us at once */

static volatile sig_atomic_t exiting;
static volatile pid_t child_pid; /* for the signal handler: the command run under us */
static volatile sig_atomic_t summary_started;
static char forced_msg[160]; /* what a forced exit leaves behind, said from the handler */

struct hist_run {
	struct hist_env env;
	FILE *out; /* the text report: stdout, or stderr when the CSV goes to stdout */
	struct session s;
	struct render_opts ro;
	struct csv_writer csv;
	bool csv_open;
	struct snapshot facts; /* how figures are had: the header's, and --slower's lines' */
	bool have_facts;
};

#define BURST_NS 1000000000LL /* signals this close to the first are one request */

static long long monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t); /* async-signal-safe */
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void say(const char *msg)
{
	if (write(STDERR_FILENO, msg, strlen(msg)) < 0) {
		/* nothing left to tell it with */
	}
}

/*
 * The first SIGINT, SIGTERM or SIGHUP ends tracing and prints the summary.
 * One request often arrives as several signals: timeout(1) sends its child
 * one and then its process group another, a Ctrl-C reaches every process of
 * the group. Signals within BURST_NS of the first are that same request.
 * A later one asks to hurry: before the summary, the command is killed
 * (SIGTERM's grace period skipped) and the summary still comes; once the
 * summary is being written, we leave at once (the kernel detaches BPF
 * programs as their links' fds close with us).
 */
static void on_signal(int sig)
{
	static long long first_ns;
	static int requests;
	long long now = monotonic_ns();

	if (!exiting) {
		exiting = sig;
		first_ns = now;
		requests = 1;
		return;
	}
	if (now - first_ns < BURST_NS)
		return;
	first_ns = now; /* a new burst */
	if (!summary_started && ++requests == 2 && child_pid > 0) {
		kill(child_pid, SIGKILL);
		say("kvmmmu-hist: second signal: command killed; the summary follows "
		    "(a third exits without it)\n");
		return;
	}
	if (!summary_started && requests == 2) {
		say("kvmmmu-hist: second signal: the summary follows (a third exits without it)\n");
		return;
	}
	say(forced_msg);
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

/*
 * Writes out the report so far. Its reader gone (| head -1) or its file
 * failed (a full disk): tracing ends, the CSV is finished, and a failed file
 * makes the exit status 1 (cli_flush_stdout). A signal's EINTR is no failure.
 */
static void flush_out(FILE *out)
{
	if (fflush(out) && errno != EINTR)
		exiting = SIGPIPE;
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
/*
 * One report from one snapshot: the text of the interval since PREV (the
 * whole run when PREV is NULL), and the CSV rows (cumulative, like counters).
 * PREV then becomes this snapshot.
 */
static int report(struct hist_run *r, struct snapshot *prev, bool final)
{
	struct snapshot cur;
	int err;

	err = session_snapshot(&r->s, &cur, final);
	if (err)
		return err;
	if (r->env.timestamp)
		print_timestamp(r->out);
	r->ro.hide_idle = !final;
	render_text(r->out, &cur, final ? NULL : prev, &r->ro);
	session_mark(&r->s); /* KVM's counts of the next interval start here */
	flush_out(r->out);
	if (r->csv_open) {
		/* each report reaches the file whole, in one write */
		err = render_csv(&r->csv, &cur);
		if (!err)
			err = csv_writer_flush(&r->csv);
		if (err)
			elog("cannot write '%s': %s", r->env.csv_path, strerror(-err));
	}
	if (prev) {
		snapshot_free(prev);
		*prev = cur;
	} else {
		snapshot_free(&cur);
	}
	return err;
}

/* --slower: the slow faults reported since the last call, a line each and their CSV rows. */
static int print_slow(struct hist_run *r)
{
	struct slow_faults l = {};
	int err = session_take_slow(&r->s, &l);

	if (!err && l.n && r->have_facts) {
		render_slow(r->out, &l, &r->facts);
		flush_out(r->out);
		if (r->csv_open) {
			err = render_csv_slow(&r->csv, &l, &r->facts);
			if (!err)
				err = csv_writer_flush(&r->csv);
			if (err)
				elog("cannot write '%s': %s", r->env.csv_path, strerror(-err));
		}
	}
	slow_faults_free(&l);
	return err;
}

/* Whether the reader of OUT has gone (| head -1): a pipe's write end then polls POLLERR. */
static bool output_closed(FILE *out)
{
	struct pollfd p = {.fd = fileno(out), .events = 0};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

static int run(struct hist_run *r)
{
	const double start = sysinfo_monotonic();
	double next_report = start + r->env.interval;
	struct snapshot prev = {};
	long reports = 0;
	int err = 0;

	while (!exiting) {
		double now;

		if (output_closed(r->out))
			exiting = SIGPIPE;
		session_wait(&r->s, TICK_MS);
		if (r->env.slower_ns && (err = print_slow(r)))
			break;
		now = sysinfo_monotonic();
		if (session_done(&r->s))
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
	snapshot_free(&prev);
	return err;
}

static int setup(struct hist_run *r)
{
	const struct session_opts sopts = {
		.mode = r->env.session.mode,
		.attribution = r->env.attribution,
		.phases = render_wants_phases(r->env.show),
		.slower_ns = r->env.slower_ns,
		.slow_stacks = r->env.slow_stacks,
		.memslot_off = !r->env.show[SECTION_MEMSLOT] &&
			       !r->env.show[SECTION_HIST0 + KVMMMU_HIST_MEMSLOT],
		.event_counts_off = !r->env.show[SECTION_EVENTS],
		.levels_off = !r->env.show[SECTION_LEVELS],
		.region_shift = !r->env.show[SECTION_REGIONS] ? 0
				: r->env.region_shift	      ? r->env.region_shift
							      : 30, /* 1 GiB */
		.sample_every = r->env.session.sample_every,
		.lock = r->env.show[SECTION_LOCK] || render_wants_phases(r->env.show),
		.events = r->env.show[SECTION_MMU] || r->env.show[SECTION_TIMELINE],
		.kvm_stats = r->env.show[SECTION_KVM] || r->env.csv_path,
		.specs = r->env.session.specs,
		.n_specs = r->env.session.n_specs,
		.wait = r->env.wait,
		.command = r->env.command,
		.command_stderr = r->out == stderr,
	};
	int err;

	/* bad input first, before anything is loaded: -p, the command, --vcpu, the CSV */
	err = session_check(&sopts);
	if (err)
		return err;
	if (r->env.vcpu >= 0 && !r->env.command && !r->env.wait &&
	    !session_selects_vcpu(&sopts, r->env.vcpu)) {
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
	err = session_open(&r->s, &sopts);
	if (err)
		return err;
	child_pid = r->s.cmd.pid;
	return 0;
}

int main(int argc, char **argv)
{
	static struct hist_run r;
	struct model final = {};
	int err, command_status = 0;

	/*
	 * whole reports per write(2): each report, and the header, ends with
	 * fflush(). A buffer of our own: glibc sizes its own by st_blksize (4 KiB
	 * for a file or pipe), whatever setvbuf() is told with a NULL one.
	 */
	static char out_buf[1 << 16];
	/*
	 * stderr a line at a time: with --csv - it carries the report, which
	 * an unbuffered stream writes a part of a line at a time, between the
	 * lines a traced command writes to the same file
	 */
	static char err_buf[1 << 14];

	setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	setvbuf(stderr, err_buf, _IOLBF, sizeof(err_buf));
	hist_parse_args(argc, argv, &r.env);
	/* stdout carries nothing but CSV with --csv - */
	r.out = r.env.csv_path && !strcmp(r.env.csv_path, "-") ? stderr : stdout;
	snprintf(forced_msg, sizeof(forced_msg), "kvmmmu-hist: exiting now, summary lost%s%s%s\n",
		 r.env.csv_path && strcmp(r.env.csv_path, "-") ? "; '" : "",
		 r.env.csv_path && strcmp(r.env.csv_path, "-") ? r.env.csv_path : "",
		 r.env.csv_path && strcmp(r.env.csv_path, "-")
			 ? "' holds the whole reports written before (each is written whole)"
			 : "");
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

	err = setup(&r);
	if (err)
		goto cleanup;
	fprintf(r.out, "Tracing KVM MMU faults");
	if (r.env.command)
		fprintf(r.out, " of '%s'", r.env.command[0]);
	else if (r.env.session.n_specs)
		fprintf(r.out, " of the processes -p selects");
	fprintf(r.out, "... %s\n", r.env.command ? "" : "Hit Ctrl-C to end.");
	if (!session_facts(&r.s, &r.facts)) {
		r.have_facts = true;
		render_probe_header(r.out, &r.facts);
		if (render_wants_phases(r.env.show) || r.env.slower_ns)
			render_phases_header(r.out, &r.facts);
		/* what this kernel cannot give: for the user, not the data */
		render_unavailable(stderr, &r.facts, &r.ro);
		if (r.env.slower_ns)
			render_slow_header(r.out, &r.facts, r.env.slower_ns);
	}
	flush_out(r.out);
	/* a signal during the attach ended the run before it began: the command never runs */
	if (!exiting)
		session_start(&r.s);

	err = run(&r);
	session_stop(&r.s);
	child_pid = 0;
	if (!err && r.env.slower_ns)
		err = print_slow(&r); /* the last ones, before the summary */
	if (!err) {
		summary_started = 1;
		fprintf(r.out, "\n%s\n", r.env.interval ? "Summary (whole run):" : "Summary:");
		err = report(&r, NULL, true);
	}
	if (!err && r.env.vcpu >= 0) {
		session_read(&r.s, &final, true);
		if (!session_has_vcpu(&r.s, &final, r.env.vcpu)) {
			elog("vCPU %d does not exist in the traced VMs", r.env.vcpu);
			err = -ENOENT;
		}
		model_free(&final);
	}
	/* the command's own status, as time(1) and perf record give it: scripts test it */
	if (!err && r.env.command && r.s.cmd.never_ran) {
		elog("'%s' was not started: tracing ended before it could run", r.env.command[0]);
	} else if (!err && r.env.command && WIFEXITED(r.s.cmd.status) &&
		   WEXITSTATUS(r.s.cmd.status)) {
		elog("'%s' exited with status %d", r.env.command[0], WEXITSTATUS(r.s.cmd.status));
		command_status = WEXITSTATUS(r.s.cmd.status);
	} else if (!err && r.env.command && WIFSIGNALED(r.s.cmd.status) && !r.s.cmd.stopped) {
		elog("'%s' was killed by signal %d", r.env.command[0], WTERMSIG(r.s.cmd.status));
		command_status = 128 + WTERMSIG(r.s.cmd.status);
	}
cleanup:
	if (r.csv_open && csv_writer_close(&r.csv) && !err) {
		elog("cannot write '%s': %s", r.env.csv_path, strerror(EIO));
		err = -EIO;
	}
	if (r.have_facts)
		snapshot_free(&r.facts);
	session_close(&r.s);
	session_args_free(&r.env.session);
	free(r.env.command_line);
	/* a report lost to a full disk is a failure (a reader gone, | head, is not) */
	if (r.out == stdout && cli_flush_stdout())
		return 1;
	return err ? 1 : command_status;
}
