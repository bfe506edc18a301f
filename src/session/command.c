// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "log.h"

#define CHILD_TERM_SECS 5 /* a command that outlives SIGTERM by this much is killed */

bool command_exists(const char *cmd)
{
	const char *path = getenv("PATH");
	char full[4096];

	if (strchr(cmd, '/'))
		return !access(cmd, X_OK);
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");

		snprintf(full, sizeof(full), "%.*s/%s", (int)len, len ? p : ".", cmd);
		if (!access(full, X_OK))
			return true;
		p += len + (p[len] == ':');
	}
	errno = ENOENT;
	return false;
}

pid_t command_start(struct command *c, char **argv, bool to_stderr)
{
	pid_t parent = getpid();
	int p[2];

	c->release_fd = -1;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	/* nothing unwritten for the child to write again (its exec failure's message) */
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		c->pid = 0;
		return err;
	}
	if (!c->pid) {
		char go;

		/* never orphaned: if we die, even by SIGKILL, the command gets SIGTERM */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		close(p[1]);
		/* with --csv -, stdout is the CSV's alone: the command's output joins our report */
		if (to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		if (read(p[0], &go, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "kvmmmu-hist: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	c->release_fd = p[1];
	return c->pid;
}

void command_release(struct command *c)
{
	if (c->release_fd > 0) {
		if (write(c->release_fd, "g", 1) != 1)
			elog("cannot start the command: %s", strerror(errno));
		close(c->release_fd);
		c->release_fd = -1;
	}
}

bool command_done(struct command *c)
{
	if (c->pid <= 0)
		return false;
	if (waitpid(c->pid, &c->status, WNOHANG) == c->pid) {
		c->pid = 0;
		return true;
	}
	return false;
}

void command_stop(struct command *c, const char *name)
{
	struct timespec step = {0, 10000000};

	if (c->pid <= 0)
		return;
	c->stopped = true;
	kill(c->pid, SIGTERM);
	for (int i = 0; i < CHILD_TERM_SECS * 100; i++) {
		if (waitpid(c->pid, &c->status, WNOHANG) == c->pid)
			goto reaped;
		nanosleep(&step, NULL);
	}
	elog("'%s' (pid %d) ignored SIGTERM for %d s: killed", name, c->pid, CHILD_TERM_SECS);
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &c->status, 0);
reaped:
	c->pid = 0;
}

void command_close(struct command *c)
{
	if (c->release_fd >= 0)
		close(c->release_fd);
	c->release_fd = -1;
}
