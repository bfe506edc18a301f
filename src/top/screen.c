// SPDX-License-Identifier: GPL-2.0
#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "screen.h"
#include "log.h"
#include "sysinfo.h"
#include "top.h"

#define MIN_COLS 60
#define MIN_LINES 8
#define KEY_ESC 27
static const double delays[] = {0.5, 1, 2, 5, 10};

static bool open_screen;

static void restore(void)
{
	if (open_screen) {
		endwin();
		open_screen = false;
	}
}

int screen_open(struct top *t)
{
	(void)t;
	if (!initscr()) {
		elog("cannot use the terminal (TERM=%s): try -b", getenv("TERM") ?: "");
		return -1;
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
			if (t->vm_pid > 0) {
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
				t->selected = 0;
				top_refresh(t);
			}
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
		"  Enter       the selected VM's vCPUs      Esc, Backspace  back",
		"  Up, Down    select a row",
		"  <  >        sort by the previous / next key (faults, name, pid, p99, lock)",
		"  i           invert the sort",
		"  t           per-second values / counts since the start",
		"  r           counts since now (reset)",
		"  s           refresh delay: 0.5, 1, 2, 5, 10 s",
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
	for (int c = 0; c < N_TOP_COLS && x < COLS; c++) {
		int w = top_col_width(c);

		if (!tb->have[c])
			continue;
		top_cell(tb, r, c, cell, sizeof(cell));
		if (c == COL_NAME) {
			if ((int)strlen(cell) > w)
				snprintf(cell + w - 1, sizeof(cell) - (size_t)w + 1, "~");
			mvprintw(y, x, "%-*s", w, cell);
			x += w;
		} else {
			mvprintw(y, x, " %*s", w, cell);
			x += w + 1;
		}
	}
	if (r->gone)
		mvaddstr(y, x < COLS - 8 ? x + 1 : COLS - 8, "exited");
	attroff(A_REVERSE | A_DIM);
}

void screen_draw(struct top *t)
{
	const struct top_table *tb = &t->table;
	const struct kvmmmu_health *h = &t->prev.m.health;
	char kernel[128], tdp[16], view[64];
	struct utsname u;
	int y = 0, x = 0;

	if (t->help) {
		draw_help();
		return;
	}
	erase();
	if (COLS < MIN_COLS || LINES < MIN_LINES) {
		mvprintw(0, 0, "kvmmmu-top: the terminal is %dx%d; it needs %dx%d", COLS, LINES,
			 MIN_COLS, MIN_LINES);
		refresh();
		return;
	}
	uname(&u);
	mvprintw(y++, 0, "kvmmmu-top - %s  kernel %s  tdp_mmu=%s  outcomes from %s%s", u.nodename,
		 sysinfo_kernel_release(kernel, sizeof(kernel)), sysinfo_tdp_mmu(tdp, sizeof(tdp)),
		 t->facts.func_mode ? "function probes" : "tracepoints",
		 t->paused ? "  PAUSED" : "");
	if (t->vm_pid > 0)
		snprintf(view, sizeof(view), "vCPUs of pid %d (Esc: back)", t->vm_pid);
	else
		snprintf(view, sizeof(view), "%zu VM%s", tb->n, tb->n == 1 ? "" : "s");
	mvprintw(y++, 0, "%s  %s  sort: %s%s  refresh %.1f s  latency: %s%s", view,
		 t->since_start ? "counts since start" : "per second", top_sort_name(t->sort),
		 t->invert ? " (inverted)" : "", t->delay,
		 tb->latency ? tb->latency : "none here (kvmmmu-check says why)",
		 t->facts.sample_every > 1 ? ", sampled" : "");
	mvprintw(y++, 0, "lost: %llu drops, %llu kprobe misses, %llu timeline events; h for keys",
		 (unsigned long long)h->drops, (unsigned long long)h->kprobe_missed,
		 (unsigned long long)h->timeline_lost);
	y++;
	attron(A_BOLD | A_REVERSE);
	move(y, 0);
	clrtoeol();
	for (int c = 0; c < N_TOP_COLS && x < COLS; c++) {
		if (!tb->have[c])
			continue;
		mvprintw(y, x, c == COL_NAME ? "%-*s" : " %*s", top_col_width(c),
			 top_col_header(tb, c));
		x += top_col_width(c) + (c != COL_NAME);
	}
	attroff(A_BOLD | A_REVERSE);
	y++;
	if (t->selected >= tb->n && tb->n)
		t->selected = tb->n - 1;
	for (size_t i = 0; i < tb->n && y < LINES - 2; i++)
		draw_row(y++, tb, &tb->rows[i], i == t->selected);
	if (!tb->n)
		mvprintw(y++, 0, "  no KVM MMU faults seen yet%s",
			 t->env.n_specs ? " in the VMs -p selects" : "");
	attron(A_BOLD);
	draw_row(LINES - 1, tb, &tb->total, false);
	attroff(A_BOLD);
	refresh();
}
