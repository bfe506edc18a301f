// SPDX-License-Identifier: GPL-2.0
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
