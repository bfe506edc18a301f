// SPDX-License-Identifier: GPL-2.0
#include <curses.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "screen.h"
#include "log.h"
#include "prompt.h"
#include "sysinfo.h"
#include "top.h"

#define MIN_COLS 60
#define MIN_LINES 8
#define KEY_ESC 27
static const double delays[] = {0.5, 1, 2, 5, 10};

static bool open_screen;

/* Text at (Y, X), cut at the right edge: ncurses would wrap the rest onto the next line. */
static void put(int y, int x, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (x >= COLS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mvaddnstr(y, x, buf, COLS - x);
}

/* Width of column C on screen, its separator included. */
static int col_span(int c)
{
	return top_col_width(c) + (c != COL_NAME);
}

static void restore(void)
{
	if (open_screen) {
		endwin();
		open_screen = false;
	}
}

/* Whether terminfo's string capability CAP is there (NULL: absent; -1: not a string). */
static bool has_cap(const char *cap)
{
	const char *v = tigetstr(cap);

	return v && v != (const char *)-1;
}

int screen_open(struct top *t)
{
	/* newterm(), not initscr(): on a terminal ncurses cannot drive, it returns, not exits */
	SCREEN *scr = isatty(STDOUT_FILENO) ? newterm(NULL, stdout, stdin) : NULL;

	if (!scr)
		return -ENOTTY;
	(void)t;
	/*
	 * A terminal that cannot put the cursor anywhere (TERM=dumb, a printing
	 * one) would have every frame written over one line: plain frames there
	 */
	if (!has_cap("cup") || !has_cap("clear")) {
		endwin();
		delscreen(scr);
		return -EOPNOTSUPP;
	}
	open_screen = true;
	atexit(restore); /* the terminal comes back whatever way we leave */
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	return 0;
}

void screen_close(struct top *t)
{
	(void)t;
	restore();
}

/* Reads a regex on the last line; empty clears the filter, Esc keeps it; Ctrl-C quits. */
static void ask_filter(struct top *t)
{
	char buf[128];
	int got = prompt_line("filter VMs by name (regex, empty for all; Esc: cancel): ", buf,
			      sizeof(buf));

	if (got < 0)
		t->quit = true;
	else if (got && top_set_filter(t, buf))
		snprintf(t->status, sizeof(t->status), "not a regular expression: %s", buf);
}

/* Too small to draw: it says so and waits for a resize; only q (and Ctrl-C) act meanwhile. */
static bool too_small(void)
{
	return COLS < MIN_COLS || LINES < MIN_LINES;
}

static void next_delay(struct top *t)
{
	size_t i;

	for (i = 0; i < sizeof(delays) / sizeof(delays[0]) && delays[i] <= t->delay; i++)
		;
	t->delay = delays[i % (sizeof(delays) / sizeof(delays[0]))];
}

bool screen_keys(struct top *t)
{
	bool redraw = false;
	int ch;

	while ((ch = getch()) != ERR) {
		redraw = true;
		if (too_small() && ch != 'q')
			continue;    /* a key would act unseen */
		t->status[0] = '\0'; /* a key's message lasts until the next key */
		if (t->help && ch != KEY_RESIZE) {
			t->help = false; /* any key leaves the help */
			continue;
		}
		switch (ch) {
		case 'q':
			t->quit = true;
			break;
		case KEY_ESC:
		case KEY_BACKSPACE:
			if (t->vcpu >= 0) {
				t->vcpu = -1;
				t->show_slow = false;
			} else if (t->vm_pid > 0) {
				t->vm_pid = 0;
				t->selected = 0;
				top_refresh(t);
			} else if (ch == KEY_ESC) {
				t->quit = true;
			}
			break;
		case '\n':
		case KEY_ENTER:
			if (t->vm_pid <= 0 && t->selected < t->table.n) {
				t->vm_pid = t->table.rows[t->selected].pid;
				t->vm_index = t->table.rows[t->selected].vm_index;
				t->selected = 0;
				top_refresh(t);
			} else if (t->vm_pid > 0 && t->vcpu < 0 && t->selected < t->table.n) {
				t->vcpu = t->table.rows[t->selected].vcpu;
			}
			break;
		case '/':
		case 'f':
			ask_filter(t);
			top_refresh(t);
			break;
		case KEY_UP:
			if (t->selected > 0)
				t->selected--;
			break;
		case KEY_DOWN:
			if (t->selected + 1 < t->table.n)
				t->selected++;
			break;
		case '<':
			t->sort = (enum top_sort)((t->sort + N_TOP_SORTS - 1) % N_TOP_SORTS);
			top_table_sort(&t->table, t->sort, t->invert);
			break;
		case '>':
			t->sort = (enum top_sort)((t->sort + 1) % N_TOP_SORTS);
			top_table_sort(&t->table, t->sort, t->invert);
			break;
		case 'i':
			t->invert = !t->invert;
			top_table_sort(&t->table, t->sort, t->invert);
			break;
		case 't':
			t->since_start = !t->since_start;
			top_refresh(t);
			break;
		case 'r':
			top_reset(t);
			top_refresh(t);
			break;
		case 's':
			next_delay(t);
			break;
		case 'l':
			if (t->vcpu >= 0)
				t->show_slow = !t->show_slow;
			else
				snprintf(t->status, sizeof(t->status),
					 "l: a vCPU's slow faults, in its view (Enter on a VM, "
					 "then on "
					 "a vCPU)");
			break;
		case ' ':
		case 'z':
			t->paused = !t->paused;
			break;
		case 'h':
		case '?':
			t->help = true;
			break;
		default:
			break;
		}
	}
	return redraw;
}

static void draw_help(void)
{
	static const char *const lines[] = {
		"kvmmmu-top keys",
		"",
		"  Enter       the selected VM's vCPUs, a vCPU's histogram   Esc, Backspace  back",
		"  /, f        filter VMs by name (a regex; empty: all; Esc: cancel)",
		"  Up, Down    select a row",
		"  <  >        sort by the previous / next key (faults, name, pid, p99, lock)",
		"  i           invert the sort",
		"  t           per-second values / counts since the start",
		"  r           counts since now (reset)",
		"  s           refresh delay: 0.5, 1, 2, 5, 10 s",
		"  l           in a vCPU's view: its slow faults (--slower MS), newest first",
		"  space, z    pause",
		"  h, ?        this help (any key leaves it)",
		"  q, Esc      quit (Ctrl-C too)",
	};

	erase();
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		mvaddnstr((int)i + 1, 2, lines[i], COLS - 3);
	refresh();
}

static void draw_row(int y, const struct top_table *tb, const struct top_row *r, bool selected)
{
	char cell[80];
	int x = 0;

	if (selected)
		attron(A_REVERSE);
	if (r->gone)
		attron(A_DIM);
	move(y, 0);
	clrtoeol();
	/* whole columns only, as many as fit: a cut one would wrap */
	for (int c = 0; c < N_TOP_COLS; c++) {
		int w = top_col_width(c);

		if (!tb->have[c])
			continue;
		if (x + col_span(c) > COLS)
			break;
		top_cell(tb, r, c, cell, sizeof(cell));
		if (c == COL_NAME) {
			if ((int)strlen(cell) > w)
				snprintf(cell + w - 1, sizeof(cell) - (size_t)w + 1, "~");
			put(y, x, "%-*s", w, cell);
		} else {
			put(y, x, " %*s", w, cell);
		}
		x += col_span(c);
	}
	if (r->gone)
		put(y, x + 8 < COLS ? x + 1 : COLS - 7, "exited");
	attroff(A_REVERSE | A_DIM);
}

/* The figures of vCPU t->vcpu of VM t->vm_pid, since the reference snapshot. */
static bool vcpu_figures(const struct top *t, struct figures *out)
{
	double dt;
	const struct snapshot *ref = top_ref(t, &dt);
	const struct vm_row *vm = model_find_vm(&t->prev.m, t->vm_pid, t->vm_index);
	const struct vm_row *old = ref ? model_find_vm(&ref->m, t->vm_pid, t->vm_index) : NULL;

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; vm && k < vm->n_rows; k++)
		if (vm->rows[k].vcpu == t->vcpu)
			figures_add(out, &vm->rows[k].f);
	for (size_t k = 0; old && k < old->n_rows; k++)
		if (old->rows[k].vcpu == t->vcpu)
			figures_sub(out, out, &old->rows[k].f);
	return vm != NULL;
}

/* A vCPU's phases (--phases) and latency histograms, as the text renderer draws them. */
static void vcpu_hists(FILE *mem, const struct top *t, const struct figures *f,
		       const struct render_opts *o)
{
	render_phases(mem, f, &t->prev, o); /* --phases: the table, not each one's histogram */
	for (int h = 0; h < KVMMMU_N_HISTS; h++)
		if (t->prev.hist_available[h] && f->hist[h].count &&
		    strncmp(kvmmmu_hist_names[h], "phase_", 6))
			render_hist_buckets(mem, &f->hist[h], kvmmmu_hist_names[h], o);
}

/* A vCPU: its outcome table and its live latency histogram (drawn by the text renderer). */
static void draw_vcpu(struct top *t, int y)
{
	const struct render_opts o = {.unit_ns = 1e3, .unit = "usecs"};
	struct figures f;
	__u64 faults;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *mem;

	if (!vcpu_figures(t, &f)) {
		put(y, 0, "  vCPU %d of pid %d: no figures", t->vcpu, t->vm_pid);
		refresh();
		return;
	}
	faults = f.counters[KVMMMU_FAULTS];
	put(y++, 0, "vCPU %d of pid %d (Esc: back), %s", t->vcpu, t->vm_pid,
	    t->since_start ? "since start" : "last interval");
	put(y++, 2, "%-24s %12llu", "faults", (unsigned long long)faults);
	for (int r = 0; r < KVMMMU_RET_PF_SLOTS && y < LINES - 1; r++) {
		if (!t->prev.ret_pf.name[r] ||
		    (!f.ret_pf[r] && !ret_pf_listed_when_zero(t->prev.ret_pf.name[r])))
			continue;
		put(y++, 2, "ret_pf_%-17s %12llu %6.1f%%", t->prev.ret_pf.name[r],
		    (unsigned long long)f.ret_pf[r],
		    faults ? 100.0 * (double)f.ret_pf[r] / (double)faults : 0.0);
	}
	if (y < LINES - 1)
		put(y++, 2,
		    "access: read %llu  write %llu  fetch %llu;  not present %llu  protection %llu",
		    (unsigned long long)f.counters[KVMMMU_ACCESS_READ],
		    (unsigned long long)f.counters[KVMMMU_ACCESS_WRITE],
		    (unsigned long long)f.counters[KVMMMU_ACCESS_FETCH],
		    (unsigned long long)f.counters[KVMMMU_ACCESS_NOT_PRESENT],
		    (unsigned long long)f.counters[KVMMMU_ACCESS_PRESENT]);
	if (y < LINES - 1)
		put(y++, 2,
		    "levels: 4k %llu  2m %llu  1g %llu installed;  4k not huge: dirty log %llu  "
		    "host %llu  nx %llu  gmem %llu",
		    (unsigned long long)f.counters[KVMMMU_LEVEL_INSTALLED_4K],
		    (unsigned long long)f.counters[KVMMMU_LEVEL_INSTALLED_2M],
		    (unsigned long long)f.counters[KVMMMU_LEVEL_INSTALLED_1G],
		    (unsigned long long)f.counters[KVMMMU_LEVEL_NOT_HUGE_DIRTY_LOG],
		    (unsigned long long)f.counters[KVMMMU_LEVEL_NOT_HUGE_HOST],
		    (unsigned long long)f.counters[KVMMMU_LEVEL_NOT_HUGE_NX],
		    (unsigned long long)f.counters[KVMMMU_LEVEL_NOT_HUGE_GMEM]);
	if (t->show_slow) {
		buf = top_slow_text(t);
		if (!buf)
			return;
	} else {
		mem = open_memstream(&buf, &len);
		if (!mem)
			return;
		vcpu_hists(mem, t, &f, &o);
		fclose(mem);
	}
	for (line = strtok_r(buf, "\n", &save); line && y < LINES - 1;
	     line = strtok_r(NULL, "\n", &save))
		mvaddnstr(y++, 0, line, COLS - 1);
	free(buf);
	refresh();
}

/* --region: in a VM's view, under its vCPUs, its most faulted regions, as many as fit. */
static void draw_regions(const struct top *t, int y)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (!mem)
		return;
	top_print_regions(mem, t, t->vm_pid, t->vm_index);
	fclose(mem);
	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line && y < LINES - 2;
	     line = strtok_r(NULL, "\n", &save))
		mvaddnstr(y++, 0, line, COLS - 1);
	free(buf);
}

/* How the functions are probed: the first attached function probe says. */
static const char *probe_mode(const struct snapshot *s)
{
	for (size_t i = 0; i < s->n_collector_probes; i++) {
		if (s->probes[i].group)
			continue;
		if (s->probes[i].kind == ATTACH_FSESSION)
			return "fsession";
		if (s->probes[i].kind == ATTACH_FENTRY)
			return "fentry";
		if (s->probes[i].kind == ATTACH_KPROBE)
			return "kprobes";
	}
	return "tracepoints only";
}

/*
 * The line under the header: the columns this kernel and these probes
 * cannot fill and why, then how many fit no more (the terminal is too
 * narrow for them).
 */
static void draw_absent(const struct top_table *tb, int y)
{
	char line[512];
	size_t n = 0;
	int x = 0, cut = 0, want = 0;

	for (int c = 0; c < N_TOP_COLS; c++) {
		if (!tb->have[c])
			continue;
		want += col_span(c);
		if (!cut && x + col_span(c) <= COLS)
			x += col_span(c);
		else
			cut++;
	}
	/* first what a wider terminal would show, then what no terminal would here */
	if (cut)
		n = (size_t)snprintf(line, sizeof(line),
				     "%d column%s past the edge (%d wide shows all)", cut,
				     cut == 1 ? "" : "s", want);
	for (int c = 0, groups = 0; c < N_TOP_COLS && n < sizeof(line); c++) {
		bool same_as_next =
			c + 1 < N_TOP_COLS && !tb->have[c + 1] && tb->why[c + 1] == tb->why[c];
		const char *sep = " ";

		/* shown, or not known yet (before the first reading: no reason to give) */
		if (tb->have[c] || !tb->why[c])
			continue;
		/* columns that are absent for one reason share it: "P50 P99 MAX (why)" */
		if (!c || tb->have[c - 1] || tb->why[c - 1] != tb->why[c])
			sep = groups++ ? "; " : cut ? "; not here: " : "not here: ";
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s", sep);
		if (n < sizeof(line))
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s%s%s",
					      top_col_header(tb, c), same_as_next ? "" : " (",
					      same_as_next ? "" : tb->why[c],
					      same_as_next ? "" : ")");
	}
	if (n)
		put(y, 0, "%s", line);
}

/* What a terminal too small for the table shows, wrapped at spaces to its width. */
static void draw_too_small(void)
{
	char msg[64];
	const char *p = msg;

	snprintf(msg, sizeof(msg), "terminal too small (need %dx%d)", MIN_COLS, MIN_LINES);
	erase();
	for (int y = 0; *p && y < LINES; y++) {
		int n = (int)strlen(p);

		if (n > COLS) {
			for (n = COLS; n > 0 && p[n] != ' '; n--)
				;
			if (!n)
				n = COLS; /* a word wider than the terminal: cut */
		}
		mvaddnstr(y, 0, p, n);
		for (p += n; *p == ' '; p++)
			;
	}
	refresh();
}

/* Why the table has no rows: a filter, VMs that exited, or none seen yet. */
static void draw_no_rows(const struct top *t, int y)
{
	const struct vm_row *vm =
		t->have_prev ? model_find_vm(&t->prev.m, t->vm_pid, t->vm_index) : NULL;

	if (t->vm_pid > 0)
		put(y, 0,
		    vm && !vm->gone ? "  no vCPU of pid %d seen yet (Esc: back)"
				    : "  pid %d's VM has exited (Esc: back)",
		    t->vm_pid);
	else if (t->hidden)
		put(y, 0,
		    "  no VM matches filter '%s' (%zu hidden; TOTAL counts them; / to change)",
		    t->filter, t->hidden);
	else if (t->n_exited)
		put(y, 0, "  no VM running: %zu exited since kvmmmu-top started%s", t->n_exited,
		    t->since_start ? " (TOTAL keeps their counts)" : "");
	else
		put(y, 0, "  no KVM MMU faults seen yet%s",
		    t->env.session.n_specs ? " in the VMs -p selects" : "");
}

void screen_draw(struct top *t)
{
	const struct top_table *tb = &t->table;
	const struct kvmmmu_health *h = &t->prev.m.health;
	char kernel[128], tdp[16], view[64], cost[96];
	struct utsname u;
	int y = 0, x = 0;

	if (too_small()) {
		draw_too_small();
		return;
	}
	if (t->help) {
		draw_help();
		return;
	}
	erase();
	uname(&u);
	put(y++, 0, "kvmmmu-top - %s  kernel %s  tdp_mmu=%s  probes: %s  outcomes from %s%s",
	    u.nodename, sysinfo_kernel_release(kernel, sizeof(kernel)),
	    sysinfo_tdp_mmu(tdp, sizeof(tdp)), probe_mode(&t->prev),
	    t->facts.func_mode ? "function probes" : "tracepoints", t->paused ? "  PAUSED" : "");
	if (t->vm_pid > 0)
		snprintf(view, sizeof(view), "vCPUs of pid %d (Esc: back)", t->vm_pid);
	else
		snprintf(view, sizeof(view), "%zu VM%s", tb->n, tb->n == 1 ? "" : "s");
	put(y++, 0, "%s  %s  sort: %s%s  refresh %.1f s  latency: %s%s", view,
	    t->since_start ? "counts since start" : "per second", top_sort_name(t->sort),
	    t->invert ? " (inverted)" : "", t->delay,
	    tb->latency	   ? tb->latency
	    : t->have_prev ? "none here (kvmmmu-check says why)"
			   : "(first reading pending)",
	    t->facts.sample_every > 1 ? ", sampled" : "");
	if (t->bpf_stats)
		snprintf(cost, sizeof(cost), "kvmmmu BPF %.2f ms/s (%.2f%% of a CPU)",
			 t->bpf_ns_per_s / 1e6, t->bpf_ns_per_s / 1e7);
	else
		snprintf(cost, sizeof(cost), "kvmmmu BPF time: unknown (kernel.bpf_stats_enabled)");
	put(y++, 0,
	    "%s; lost: %llu drops, %llu kprobe misses, %llu skipped runs, %llu timeline "
	    "events%s%s; h for keys",
	    cost, (unsigned long long)h->drops, (unsigned long long)h->kprobe_missed,
	    (unsigned long long)h->prog_missed, (unsigned long long)h->timeline_lost,
	    t->filter[0] ? "; filter: " : "", t->filter);
	if (t->status[0])
		put(y, 0, "%s", t->status);
	else if (t->vcpu < 0)
		draw_absent(tb, y);
	if (t->vcpu >= 0) {
		draw_vcpu(t, y + 1);
		return;
	}
	y++;
	attron(A_BOLD | A_REVERSE);
	move(y, 0);
	clrtoeol();
	for (int c = 0; c < N_TOP_COLS; c++) {
		if (!tb->have[c])
			continue;
		if (x + col_span(c) > COLS)
			break;
		put(y, x, c == COL_NAME ? "%-*s" : " %*s", top_col_width(c), top_col_header(tb, c));
		x += col_span(c);
	}
	attroff(A_BOLD | A_REVERSE);
	y++;
	if (t->selected >= tb->n && tb->n)
		t->selected = tb->n - 1;
	for (size_t i = 0; i < tb->n && y < LINES - 2; i++)
		draw_row(y++, tb, &tb->rows[i], i == t->selected);
	if (!tb->n)
		draw_no_rows(t, y++);
	if (t->vm_pid > 0)
		draw_regions(t, y + 1);
	attron(A_BOLD);
	draw_row(LINES - 1, tb, &tb->total, false);
	attroff(A_BOLD);
	refresh();
}
