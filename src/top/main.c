// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-top: a live view of KVM MMU faults per VM and vCPU. One session
 * (src/core), a snapshot per refresh, a table of two snapshots
 * (table.c), drawn on the screen (screen.c) or as plain frames (batch).
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <malloc.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "bpf_cost.h"
#include "cli.h"
#include "log.h"
#include "screen.h"
#include "session.h"
#include "sysinfo.h"
#include "top.h"

const char *log_prog = "kvmmmu-top";
bool log_verbose;

#define TICK_MS 50	  /* keys are read this often: never only once per refresh */
#define GONE_FRAMES 3	  /* an exited VM stays this many refreshes, marked */
#define FIRST_FRAME_S 0.2 /* the first frame this soon after attaching */

static volatile sig_atomic_t quit_signal;

/*
 * PID leaves the session: its VMs' counts since the start (or the reset)
 * stay in the since-start TOTAL, which would otherwise fall as VMs exit.
 */
static void forget(struct top *t, const struct snapshot *cur, int pid)
{
	for (size_t i = 0; i < cur->m.n_vms; i++) {
		const struct vm_row *vm = &cur->m.vms[i];
		const struct vm_row *old;
		struct figures f;

		if (vm->pid != pid)
			continue;
		old = t->have_base ? model_find_vm(&t->base.m, pid, vm->index) : NULL;
		if (old)
			figures_sub(&f, &vm->total, &old->total);
		else
			f = vm->total;
		figures_add(&t->exited, &f);
		t->n_exited++;
	}
	session_forget(&t->s, pid);
}

/*
 * Exited VMs: shown, marked, for GONE_FRAMES refreshes after the one that
 * first saw them gone, then they leave the session (memory stays flat over
 * a long run), whether or not a row showed them (a filter, a vCPU view).
 */
static void age_gone(struct top *t, const struct snapshot *cur)
{
	int forgotten = 0; /* a process's other VMs: it has left with the first */

	for (size_t i = 0; i < cur->m.n_vms; i++) {
		const struct vm_row *vm = &cur->m.vms[i];
		size_t k;

		if (!vm->gone || vm->pid == forgotten)
			continue;
		for (k = 0; k < t->n_gone && t->gone[k].pid != vm->pid; k++)
			;
		if (k == t->n_gone && t->n_gone < TOP_MAX_GONE) {
			t->gone[k].pid = vm->pid;
			t->gone[k].frame = t->frames;
			t->n_gone++;
		}
		if (k < t->n_gone && t->frames - t->gone[k].frame >= GONE_FRAMES) {
			forget(t, cur, vm->pid);
			forgotten = vm->pid;
			t->gone[k] = t->gone[--t->n_gone];
		}
	}
}

/* Rows of VMs that have left the session this refresh: not shown again. */
static void drop_forgotten(struct top *t)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->table.n; i++) {
		const struct top_row *r = &t->table.rows[i];
		bool tracked = !r->gone;

		for (size_t k = 0; !tracked && k < t->n_gone; k++)
			tracked = t->gone[k].pid == r->pid;
		if (tracked)
			t->table.rows[kept++] = *r;
	}
	t->table.n = kept;
}

/* The VM view with a filter: only VMs whose name matches it. */
static void filter_rows(struct top *t)
{
	size_t kept = 0;

	t->hidden = 0;
	if (!t->filter_re || t->vm_pid > 0)
		return;
	for (size_t i = 0; i < t->table.n; i++)
		if (!regexec(t->filter_re, t->table.rows[i].name, 0, NULL, 0))
			t->table.rows[kept++] = t->table.rows[i];
	t->hidden = t->table.n - kept;
	t->table.n = kept;
}

int top_set_filter(struct top *t, const char *regex)
{
	regex_t *re = NULL;

	if (*regex) {
		re = malloc(sizeof(*re));
		if (!re || regcomp(re, regex, REG_EXTENDED | REG_NOSUB)) {
			free(re);
			return -EINVAL;
		}
	}
	if (t->filter_re) {
		regfree(t->filter_re);
		free(t->filter_re);
	}
	t->filter_re = re;
	snprintf(t->filter, sizeof(t->filter), "%s", regex);
	return 0;
}

/* kvmmmu's own BPF time per second since the last refresh. */
static void measure_bpf(struct top *t, double dt)
{
	__u64 ns;

	if (!t->bpf_stats)
		return;
	ns = bpf_cost_run_ns(&t->s);
	if (t->bpf_ns && dt > 0 && ns >= t->bpf_ns)
		t->bpf_ns_per_s = (double)(ns - t->bpf_ns) / dt;
	t->bpf_ns = ns;
}

int top_refresh(struct top *t)
{
	struct snapshot cur;
	const struct snapshot *ref;
	double dt;
	int err;

	/* no frame shows past timeline events: they would pile up while VMs run */
	session_trim_timeline(&t->s);
	err = session_snapshot(&t->s, &cur, false);
	if (err)
		return err;
	measure_bpf(t, cur.wall - (t->have_prev ? t->prev.wall : t->start_wall));
	if (t->since_start) { /* counts since the start, or since 'r' */
		ref = t->have_base ? &t->base : NULL;
		dt = cur.wall - (t->have_base ? t->base.wall : t->start_wall);
	} else {
		ref = t->have_prev ? &t->prev : NULL;
		dt = cur.wall - (t->have_prev ? t->prev.wall : t->start_wall);
	}
	t->table.exited = &t->exited;
	err = top_table_build(&t->table, &cur, ref, dt, t->since_start, t->vm_pid, t->vm_index);
	if (!err) {
		top_table_sort(&t->table, t->sort, t->invert);
		age_gone(t, &cur);
		drop_forgotten(t);
		filter_rows(t);
		t->frames++;
	}
	if (!err && t->csv_open) {
		err = render_csv(&t->csv, &cur);
		if (err)
			elog("cannot write '%s': %s", t->env.csv_path, strerror(-err));
	}
	/* --slower: this refresh's slow faults, and their CSV rows */
	if (!err && (err = top_slow_take(t)))
		elog("the slow faults: %s", strerror(-err));
	if (!err && t->csv_open) {
		err = csv_writer_flush(&t->csv);
		if (err)
			elog("cannot write '%s': %s", t->env.csv_path, strerror(-err));
	}
	/* the old one stays until the next refresh: the vCPU tables of this frame need it */
	if (t->have_older)
		snapshot_free(&t->older);
	t->older = t->prev;
	t->have_older = t->have_prev;
	t->prev = cur;
	t->have_prev = true;
	return err;
}

const struct snapshot *top_ref(const struct top *t, double *dt)
{
	const struct snapshot *ref;

	if (t->since_start)
		ref = t->have_base ? &t->base : NULL;
	else
		ref = t->have_older ? &t->older : NULL;
	*dt = t->prev.wall - (ref ? ref->wall : t->start_wall);
	return ref;
}

void top_print_regions(FILE *f, const struct top *t, int pid, int vm_index)
{
	const struct vm_row *vm = t->have_prev ? model_find_vm(&t->prev.m, pid, vm_index) : NULL;

	if (t->env.region_shift && vm)
		render_regions(f, &t->prev, vm);
}

void top_reset(struct top *t)
{
	if (t->have_base)
		snapshot_free(&t->base);
	t->have_base = !session_snapshot(&t->s, &t->base, false);
	memset(&t->exited, 0, sizeof(t->exited)); /* they exited before now: nothing since */
}

bool top_quit_signalled(void)
{
	return quit_signal != 0;
}

/*
 * What the figures miss, in the screen's words, once there is any: a count
 * that falls short of KVM's says why in the frame that shows it.
 */
static void print_losses(const struct kvmmmu_health *h)
{
	if (!h->drops && !h->kprobe_missed && !h->prog_missed && !h->timeline_lost)
		return;
	printf("lost: %llu drops, %llu kprobe misses, %llu skipped runs, %llu timeline events\n",
	       (unsigned long long)h->drops, (unsigned long long)h->kprobe_missed,
	       (unsigned long long)h->prog_missed, (unsigned long long)h->timeline_lost);
}

/*
 * One plain frame: a timestamped header, the table, each VM's vCPUs under
 * it with --per-vcpu. 0, or -errno: stdout could not take it (a full disk).
 */
static int print_frame(struct top *t)
{
	char when[16];
	time_t now = time(NULL);
	struct tm tm;

	errno = 0;
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&now, &tm));
	/* which histogram the latency columns are of, as the screen's header says */
	printf("%s kvmmmu-top: %zu VM%s, %s (* exited); %s%s\n", when, t->table.n,
	       t->table.n == 1 ? "" : "s", t->since_start ? "counts since start" : "per second",
	       t->table.latency ? "latency: " : "no latency figures (see kvmmmu-check)",
	       t->table.latency ? t->table.latency : "");
	print_losses(&t->prev.m.health);
	if (!t->env.per_vcpu) {
		top_print_table(stdout, &t->table);
	} else {
		struct top_table vcpus = {};

		top_print_table(stdout, &t->table);
		for (size_t i = 0; i < t->table.n; i++) {
			double dt;
			const struct snapshot *ref = top_ref(t, &dt);
			int pid = t->table.rows[i].pid;

			if (top_table_build(&vcpus, &t->prev, ref, dt, t->since_start, pid,
					    t->table.rows[i].vm_index))
				continue;
			printf("  vCPUs of %s (pid %d):\n", t->table.rows[i].name, pid);
			top_print_table(stdout, &vcpus);
			top_print_regions(stdout, t, pid, t->table.rows[i].vm_index);
		}
		top_table_free(&vcpus);
	}
	if (t->env.slower_ns && t->slow_new.n) {
		render_slow_header(stdout, &t->facts, t->env.slower_ns);
		render_slow(stdout, &t->slow_new, &t->facts);
	}
	/* (to become the shared stdout check of src/lib/ when there is one) */
	if (fflush(stdout) || ferror(stdout))
		return errno ? -errno : -EIO;
	return 0;
}

/* -v: what the session keeps, and the heap in use: a long run's memory is bounded. */
static void print_state(const struct top *t)
{
	struct mallinfo2 mi = mallinfo2();
	struct session_held h;

	session_held(&t->s, &h);
	fprintf(stderr,
		"kvmmmu-top: state: %zu names, %zu retired threads, %zu timeline events, %zu "
		"exited VMs shown, %zu VMs' KVM counters; heap in use %zu KiB\n",
		h.names, h.retired_threads, h.timeline_events, t->n_gone, h.kvm_counters,
		mi.uordblks / 1024);
	/* a few held names, so that a leak says whose it is */
	session_print_held_names(&t->s, stderr, "kvmmmu-top: state: name ", 4);
}

static int run_batch(struct top *t)
{
	double next = sysinfo_monotonic() + FIRST_FRAME_S;
	int err = 0;

	while (!quit_signal) {
		session_wait(&t->s, TICK_MS * 2);
		if (sysinfo_monotonic() < next)
			continue;
		err = top_refresh(t);
		if (err)
			break;
		err = print_frame(t);
		if (err == -EPIPE) {
			err = 0;
			break; /* | head: nobody reads any more */
		}
		if (err) {
			elog("stdout: %s", strerror(-err)); /* as cli_flush_stdout() says it */
			break;
		}
		if (t->env.verbose)
			print_state(t);
		if (t->env.count && (long)t->frames >= t->env.count)
			break;
		next += t->frames == 1 ? t->env.delay - FIRST_FRAME_S : t->env.delay;
	}
	return err;
}

/*
 * Each -p PID must be a VM now (a process with a KVM VM open), as
 * kvmmmu-hist's session_check() says; only names wait for a VM to appear.
 * 0, or -errno once it has said why.
 */
static int check_pids(const struct session_opts *o)
{
	struct proc_spec *pids = calloc((size_t)o->n_specs + 1, sizeof(*pids));
	struct session_opts only = {.specs = pids, .wait = false};
	int err;

	if (!pids) {
		elog("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < o->n_specs; i++)
		if (o->specs[i].pid)
			pids[only.n_specs++] = o->specs[i];
	err = session_check(&only);
	free(pids);
	return err;
}

static int run_screen(struct top *t)
{
	double next = sysinfo_monotonic() + FIRST_FRAME_S;
	int err = screen_open(t);

	if (err == -ENOTTY || err == -EOPNOTSUPP) {
		if (err == -ENOTTY)
			elog("note: no screen on this terminal (TERM=%s, or not a terminal): "
			     "batch frames instead, as with -b",
			     getenv("TERM") ?: "");
		else
			elog("note: this terminal (TERM=%s) cannot move the cursor: batch frames "
			     "instead, as with -b",
			     getenv("TERM") ?: "");
		return run_batch(t);
	}
	if (err)
		return err;
	while (!quit_signal && !t->quit) {
		bool redraw = screen_keys(t);

		if (!t->paused && sysinfo_monotonic() >= next) {
			err = top_refresh(t);
			if (err)
				break;
			redraw = true;
			next = sysinfo_monotonic() + t->delay;
			if (t->env.count && (long)t->frames >= t->env.count)
				t->quit = true;
		}
		if (redraw)
			screen_draw(t);
		session_wait(&t->s, TICK_MS);
	}
	screen_close(t);
	return err;
}

int main(int argc, char **argv)
{
	static struct top t;
	struct session_opts sopts;
	int err;

	top_parse_args(argc, argv, &t.env);
	log_verbose = t.env.verbose;
	libbpf_set_print(log_libbpf);
	cli_catch_quit_signals(&quit_signal);
	t.sort = t.env.sort;
	t.vcpu = -1;
	t.since_start = t.env.since_start;
	t.delay = t.env.delay;
	sopts = (struct session_opts){
		.mode = t.env.session.mode,
		.attribution = ATTRIBUTE_AUTO,
		.sample_every = t.env.session.sample_every,
		.lock = true,
		.events = true,
		.phases = t.env.phases,
		.phases_option = "--phases",
		.memslot_off = !t.env.memslot,
		.event_counts_off = true, /* not on its screen */
		.memslot_option = "--memslot",
		.slower_ns = t.env.slower_ns,
		.slow_stacks = t.env.slow_stacks,
		.region_shift = t.env.region_shift,
		.kvm_stats = false,
		.specs = t.env.session.specs,
		.n_specs = t.env.session.n_specs,
		.wait = true, /* VMs that start while it runs appear */
	};
	/* bad input first: a -p PID is a VM now (names are waited for) */
	err = check_pids(&sopts);
	if (err)
		return 1;
	if (t.env.csv_path) {
		const struct csv_meta meta = {.tool = "kvmmmu-top",
					      .command_line = t.env.command_line};

		err = csv_writer_open(&t.csv, t.env.csv_path, &meta);
		if (err) {
			elog("cannot write '%s': %s", t.env.csv_path, strerror(-err));
			return 1;
		}
		t.csv_open = true;
	}
	err = session_open(&t.s, &sopts);
	/* the screen shows kvmmmu's own BPF time: per-program statistics on while we run */
	if (!err && !t.env.batch)
		t.bpf_stats = bpf_cost_enable();
	if (!err) {
		t.start_wall = sysinfo_now();
		err = session_facts(&t.s, &t.facts);
	}
	if (!err)
		err = t.env.batch ? run_batch(&t) : run_screen(&t);
	if (t.have_prev)
		snapshot_free(&t.prev);
	if (t.have_older)
		snapshot_free(&t.older);
	if (t.have_base)
		snapshot_free(&t.base);
	snapshot_free(&t.facts);
	top_table_free(&t.table);
	top_slow_free(&t);
	top_set_filter(&t, "");
	session_close(&t.s);
	bpf_cost_restore();
	if (t.csv_open && csv_writer_close(&t.csv) && !err) {
		elog("cannot write '%s': %s", t.env.csv_path, strerror(EIO));
		err = -EIO;
	}
	session_args_free(&t.env.session);
	free(t.env.command_line);
	return err ? 1 : 0;
}
