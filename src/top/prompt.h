/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_TOP_PROMPT_H
#define KVMMMU_TOP_PROMPT_H

#include <stddef.h>

/*
 * QUESTION on the last line, then a line typed into BUF (LEN bytes,
 * printable ASCII; Backspace and Ctrl-U edit it). 1: Enter; 0: Esc (BUF is
 * to be ignored); -EINTR: Ctrl-C or another quit signal.
 */
int prompt_line(const char *question, char *buf, size_t len);

#endif
