// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deathwatch.h"
#include "log.h"

#define GOODBYE 'x'
#define MAX_HELPERS 8

/* the helpers alive: our children that are no command's (command_orphans()) */
static pid_t helpers[MAX_HELPERS];

bool deathwatch_is_helper(pid_t pid)
{
	for (size_t i = 0; i < MAX_HELPERS; i++)
		if (helpers[i] == pid)
			return true;
	return false;
}

static void remember(pid_t old, pid_t pid)
{
	for (size_t i = 0; i < MAX_HELPERS; i++)
		if (helpers[i] == old) {
			helpers[i] = pid;
			return;
		}
}

int deathwatch_start(struct deathwatch *w, void (*on_death)(void *arg), void *arg)
{
	static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	int p[2], null;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!pid) {
		char bye = 0;
		ssize_t n;

		for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
			signal(ignored[i], SIG_IGN);
		if (dup2(p[0], 3) < 0)
			_exit(1);
		close_range(4, ~0U, 0);
		null = open("/dev/null", O_RDWR);
		for (int fd = 0; null >= 0 && fd < 3; fd++)
			dup2(null, fd);
		do
			n = read(3, &bye, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1 || bye != GOODBYE)
			on_death(arg);
		_exit(0);
	}
	close(p[0]);
	w->pid = pid;
	w->fd = p[1];
	remember(0, pid);
	return 0;
}

void deathwatch_stop(struct deathwatch *w)
{
	if (w->pid <= 0)
		return;
	if (write(w->fd, &(char){GOODBYE}, 1) != 1)
		elog("helper process: %s", strerror(errno));
	close(w->fd);
	/* that child, not any: a command's other helpers are its children too */
	while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
		;
	remember(w->pid, 0);
	w->pid = 0;
}
