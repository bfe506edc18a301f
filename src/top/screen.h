/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_TOP_SCREEN_H
#define KVMMMU_TOP_SCREEN_H

#include <stdbool.h>

struct top;

/* The terminal, through ncurses; restored by screen_close(), also at exit. */
int screen_open(struct top *t);
/* Acts on the keys pressed since the last call; whether the screen needs a redraw. */
bool screen_keys(struct top *t);
void screen_draw(struct top *t);
void screen_close(struct top *t);

#endif
