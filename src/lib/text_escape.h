/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_TEXT_ESCAPE_H
#define KVMMMU_TEXT_ESCAPE_H

/*
 * Text someone else chose (a VM's name, a CSV's metadata) as it may be
 * shown: no byte of it moves a terminal's cursor, sets its title or ends a
 * CSV row.
 */
#include <stdbool.h>

/* Whether the locale's LC_CTYPE (as setlocale() left it) writes UTF-8. */
bool text_locale_utf8(void);
/*
 * S with every control character (C0, DEL, C1, and the line separators and
 * bidirectional overrides that reorder what a terminal shows) as \xNN, a
 * byte each, and backslashes doubled; with UTF8, valid UTF-8 kept as it
 * is and invalid bytes as \xNN; else every byte past ASCII as \xNN.
 * malloc()ed, or NULL.
 */
char *text_escape(const char *s, bool utf8);

#endif
