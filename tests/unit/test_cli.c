// SPDX-License-Identifier: GPL-2.0
/*
 * cli_flush_stdout(): a report that did not reach stdout (a full disk, a
 * closed fd) is an error, said in one line, found even when stdio met it
 * lines before and kept no errno; a reader that left (| head) is not.
 * Each case runs in a child whose stdout and stderr are set up for it.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli.h"

enum out { TO_FULL, TO_FULL_BUFFERED, TO_GONE_READER, TO_FILE, TO_CLOSED };

/* The child's exit status (what cli_flush_stdout() returned), its stderr into ERR. */
static int run(enum out how, char *err, size_t len)
{
	char path[] = "/tmp/kvmmmu-test-cli.XXXXXX";
	int e = mkstemp(path), fds[2], status;
	pid_t pid;
	ssize_t n;

	assert_true(e >= 0);
	unlink(path);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(e, STDERR_FILENO);
		switch (how) {
		case TO_FULL:
		case TO_FULL_BUFFERED:
			dup2(open("/dev/full", O_WRONLY), STDOUT_FILENO);
			setvbuf(stdout, NULL, how == TO_FULL ? _IOLBF : _IOFBF, 0);
			break;
		case TO_GONE_READER:
			signal(SIGPIPE, SIG_IGN); /* as kvmmmu-hist, top and the exporter do */
			if (pipe(fds))
				_exit(99);
			close(fds[0]);
			dup2(fds[1], STDOUT_FILENO);
			setvbuf(stdout, NULL, _IOLBF, 0);
			break;
		case TO_FILE:
			dup2(open("/dev/null", O_WRONLY), STDOUT_FILENO);
			break;
		case TO_CLOSED:
			close(STDOUT_FILENO);
			break;
		}
		/* a line each: with _IOLBF the write fails here, not in the flush */
		printf("first line\n");
		printf("second line\n");
		_exit(cli_flush_stdout());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	n = pread(e, err, len - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(e);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void full_disk_is_one_line_with_its_reason(void **state)
{
	char err[256];

	(void)state;
	/* the write failed two lines before the flush: its errno is found again */
	assert_int_equal(run(TO_FULL, err, sizeof(err)), 1);
	assert_string_equal(err, "kvmmmu: stdout: No space left on device\n");
	assert_int_equal(run(TO_FULL_BUFFERED, err, sizeof(err)), 1);
	assert_string_equal(err, "kvmmmu: stdout: No space left on device\n");
}

static void closed_stdout_is_an_error(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(run(TO_CLOSED, err, sizeof(err)), 1);
	assert_string_equal(err, "kvmmmu: stdout: Bad file descriptor\n");
}

static void reader_gone_is_no_error(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(run(TO_GONE_READER, err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

static void written_whole_is_no_error(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(run(TO_FILE, err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_disk_is_one_line_with_its_reason),
		cmocka_unit_test(closed_stdout_is_an_error),
		cmocka_unit_test(reader_gone_is_no_error),
		cmocka_unit_test(written_whole_is_no_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
