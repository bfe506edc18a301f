// SPDX-License-Identifier: GPL-2.0
#include "log.h"

/* Each command defines its own name; these weak defaults serve the tests. */
__attribute__((weak)) const char *log_prog = "kvmmmu";
__attribute__((weak)) bool log_verbose;
