// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static FILE *quiet;
static bool parsing;

void cli_key_init(struct argp_state *state)
{
	/* getopt already says "unrecognized option '--x'" in one line */
	if (quiet)
		state->err_stream = quiet;
}

/* Whether the reader of FD went away: a pipe or socket whose other end is closed. */
static bool reader_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	struct stat st;

	if (fstat(fd, &st) || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return false;
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

int cli_flush_stdout(void)
{
	bool lost = ferror(stdout);
	int err = 0;

	errno = 0;
	if (fflush(stdout))
		err = errno ? errno : EIO;
	if (!lost && !err)
		return 0;
	/* | head, where SIGPIPE is ignored: nobody wants the rest, as when it kills us */
	if (err == EPIPE || (!err && reader_gone(STDOUT_FILENO)))
		return 0;
	/*
	 * stdio keeps no errno of an earlier failed write; a write of nothing
	 * finds it again where the error is the file's own (/dev/full, a closed fd).
	 */
	if (!err && write(STDOUT_FILENO, "", 0) < 0)
		err = errno;
	if (err)
		elog("stdout: %s", strerror(err));
	else
		elog("stdout: write error (output lost)");
	return 1;
}

/* --help and --version print and exit inside argp_parse(): their output is checked too. */
static void flush_stdout_at_exit(void)
{
	if (parsing && cli_flush_stdout())
		_exit(1);
}

void cli_parse(const struct argp *argp, int argc, char **argv, unsigned int flags, void *input)
{
	static bool registered;
	char *argv0 = argc > 0 ? argv[0] : NULL;

	argp_err_exit_status = EXIT_USAGE;
	quiet = fopen("/dev/null", "w");
	if (!registered)
		registered = !atexit(flush_stdout_at_exit);
	/*
	 * getopt starts its messages with argv[0] ("build/kvmmmu-hist: invalid
	 * option"): the short name, as every other message has it. getopt moves
	 * the arguments after it only; argv[0] is put back for the caller.
	 */
	if (argv0)
		argv[0] = (char *)log_prog;
	parsing = true;
	if (argp_parse(argp, argc, argv, flags, NULL, input))
		exit(EXIT_USAGE);
	parsing = false;
	if (argv0)
		argv[0] = argv0;
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
