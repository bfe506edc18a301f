// SPDX-License-Identifier: GPL-2.0
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static FILE *quiet;

void cli_key_init(struct argp_state *state)
{
	/* getopt already says "unrecognized option '--x'" in one line */
	if (quiet)
		state->err_stream = quiet;
}

void cli_parse(const struct argp *argp, int argc, char **argv, unsigned int flags, void *input)
{
	argp_err_exit_status = EXIT_USAGE;
	quiet = fopen("/dev/null", "w");
	if (argp_parse(argp, argc, argv, flags, NULL, input))
		exit(EXIT_USAGE);
	if (quiet)
		fclose(quiet);
	quiet = NULL;
}

static volatile sig_atomic_t *quit_flag;

static void on_quit(int sig)
{
	*quit_flag = sig;
}

void cli_catch_quit_signals(volatile sig_atomic_t *flag)
{
	struct sigaction sa = {.sa_handler = on_quit};
	const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

	quit_flag = flag;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
