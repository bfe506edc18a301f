// SPDX-License-Identifier: GPL-2.0
/*
 * A line read on the screen's last line ('/'): not ncurses' getnstr(),
 * which reads on through Ctrl-C. Keys are read a tick at a time, so Ctrl-C
 * (SIGINT: the terminal stays in cbreak mode) quits here as anywhere else,
 * as in htop.
 */
#include <curses.h>
#include <errno.h>
#include <string.h>

#include "prompt.h"
#include "top.h"

#define PROMPT_TICK_MS 50
#define CTRL(c) ((c)&0x1f)

int prompt_line(const char *question, char *buf, size_t len)
{
	size_t n = 0;
	int ret = -EINTR;

	buf[0] = '\0';
	curs_set(1);
	timeout(PROMPT_TICK_MS);
	while (!top_quit_signalled()) {
		int ch;

		/* drawn again each time: a resize moves the last line */
		move(LINES - 1, 0);
		clrtoeol();
		mvaddnstr(LINES - 1, 0, question, COLS - 1);
		addnstr(buf, COLS - 1 - getcurx(stdscr) > 0 ? COLS - 1 - getcurx(stdscr) : 0);
		refresh();
		ch = getch();
		if (ch == ERR || ch == KEY_RESIZE)
			continue;
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
			ret = 1;
			break;
		}
		if (ch == 27) { /* Esc */
			ret = 0;
			break;
		}
		if (ch == CTRL('c')) /* a raw terminal: Ctrl-C as a key, which quits all the same */
			break;
		if (ch == KEY_BACKSPACE || ch == 127 || ch == CTRL('h')) {
			if (n)
				buf[--n] = '\0';
		} else if (ch == CTRL('u')) {
			buf[n = 0] = '\0';
		} else if (ch >= ' ' && ch < 127 && n + 1 < len) {
			buf[n++] = (char)ch;
			buf[n] = '\0';
		}
	}
	curs_set(0);
	nodelay(stdscr, TRUE);
	return ret;
}
