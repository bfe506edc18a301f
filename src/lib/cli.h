/* SPDX-License-Identifier: GPL-2.0 */
/* argp set up the way every kvmmmu command wants it: usage errors are one line, exit 2. */
#ifndef KVMMMU_CLI_H
#define KVMMMU_CLI_H

#include <argp.h>
#include <signal.h>
#include <stdlib.h>

#include "log.h"

#define EXIT_USAGE 2

/* A usage error: one line on stderr ("prog: ..."), exit 2. */
#define cli_usage_error(fmt, ...)                                                                  \
	do {                                                                                       \
		elog(fmt, ##__VA_ARGS__);                                                          \
		exit(EXIT_USAGE);                                                                  \
	} while (0)

/* Call from the parser for ARGP_KEY_INIT: drops argp's "Try --help" second line. */
void cli_key_init(struct argp_state *state);
/*
 * argp_parse() that exits 2 on usage errors (getopt has already said what
 * was wrong), its messages starting with the command's name (log_prog), not
 * the path it was run by. What --help and --version print is checked as
 * cli_flush_stdout() checks it.
 */
void cli_parse(const struct argp *argp, int argc, char **argv, unsigned int flags, void *input);

/*
 * Call last, before main returns: flushes stdout and says whether all that
 * was written to it got there. A write error (a full disk, a closed fd)
 * anywhere in the run is one line, "prog: stdout: why", and 1, the exit
 * status to return; a reader that went away (| head, with SIGPIPE ignored)
 * is no error, as SIGPIPE's quiet death is not. 0 otherwise. stdout stays
 * open; what is written after the call is not checked.
 */
int cli_flush_stdout(void);

/*
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT store their number in *FLAG (the
 * caller's loop ends on it); SIGPIPE is ignored (a write error says it).
 */
void cli_catch_quit_signals(volatile sig_atomic_t *flag);

#endif
