// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "deathwatch.h"
#include "log.h"
#include "proc_stat.h"

#define CHILD_TERM_SECS 5 /* a command that outlives SIGTERM by this much is killed */

/* What execve() would take: an executable regular file (a directory has x bits too). */
static bool runnable(const char *file)
{
	struct stat st;

	if (access(file, X_OK) || stat(file, &st))
		return false;
	if (!S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
		return false;
	}
	return true;
}

bool command_exists(const char *cmd)
{
	const char *path = getenv("PATH");
	char full[4096];

	if (strchr(cmd, '/'))
		return runnable(cmd);
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");

		snprintf(full, sizeof(full), "%.*s/%s", (int)len, len ? p : ".", cmd);
		if (runnable(full))
			return true;
		p += len + (p[len] == ':');
	}
	errno = ENOENT;
	return false;
}

static const int quit_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* In the held child: the parent's handlers are not its own. */
static void set_quit_signals(void (*handler)(int))
{
	for (size_t i = 0; i < sizeof(quit_signals) / sizeof(quit_signals[0]); i++)
		signal(quit_signals[i], handler);
}

pid_t command_start(struct command *c, char **argv, bool to_stderr)
{
	pid_t parent = getpid();
	sigset_t all, old;
	int p[2];

	c->release_fd = -1;
	c->released = false;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	/*
	 * `sh -c 'vmm & exit 0'`: the VMM outlives the command. As its
	 * subreaper we get it, and follow it until it exits (command_done).
	 */
	c->subreaper = !prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* nothing unwritten for the child to write again (its exec failure's message) */
	fflush(NULL);
	/* no signal runs our handlers in the child before it has its own */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	c->pid = fork();
	if (c->pid < 0) {
		int err = -errno;

		sigprocmask(SIG_SETMASK, &old, NULL);
		close(p[0]);
		close(p[1]);
		c->pid = 0;
		return err;
	}
	if (!c->pid) {
		char go;

		/*
		 * Held, it is not running yet: a Ctrl-C or a signal to our process
		 * group now is ours to act on (we close the pipe, it leaves
		 * unrun), not a command's death to report.
		 */
		set_quit_signals(SIG_IGN);
		sigprocmask(SIG_SETMASK, &old, NULL);
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
		/* the command's own defaults: exec would keep our SIG_IGN of SIGPIPE */
		set_quit_signals(SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "kvmmmu-hist: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	c->release_fd = p[1];
	return c->pid;
}

void command_release(struct command *c)
{
	if (c->release_fd > 0) {
		if (write(c->release_fd, "g", 1) != 1)
			elog("cannot start the command: %s", strerror(errno));
		else
			c->released = true;
		close(c->release_fd);
		c->release_fd = -1;
	}
}

/* PID's name (/proc/PID/comm) into BUF, "?" when gone. */
static const char *comm_of(pid_t pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f || !fgets(buf, (int)size, f))
		snprintf(buf, size, "?");
	else
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
	return buf;
}

/* Adds our child PID to OUT unless it is none of the command's tree; reaps it if it has exited. */
static void add_orphan(const struct command *c, pid_t pid, pid_t *out, size_t max, size_t *n)
{
	if (pid <= 0 || pid == c->pid || deathwatch_is_helper(pid))
		return;
	if (waitpid(pid, NULL, WNOHANG) == pid)
		return;
	if (*n < max)
		out[*n] = pid;
	++*n;
}

/* The children /proc lists for one of our threads ("PID PID ..."); false without that file. */
static bool read_children(const char *tid, const struct command *c, pid_t *out, size_t max,
			  size_t *n)
{
	char path[320];
	long pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/children", tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fscanf(f, "%ld", &pid) == 1)
		add_orphan(c, (pid_t)pid, out, max, n);
	fclose(f);
	return true;
}

/* Without CONFIG_PROC_CHILDREN: every process whose parent we are. */
static void scan_children(const struct command *c, pid_t *out, size_t max, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[300], line[512];
		struct proc_stat st;
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && proc_stat_parse(line, &st) &&
		    st.ppid == getpid())
			add_orphan(c, (pid_t)atoi(e->d_name), out, max, n);
		fclose(f);
	}
	if (d)
		closedir(d);
}

size_t command_orphans(const struct command *c, pid_t *out, size_t max)
{
	struct dirent *e;
	bool listed = true;
	size_t n = 0;
	DIR *d;

	if (!c->subreaper)
		return 0;
	d = opendir("/proc/self/task");
	/* an orphan is given to one of our threads: each lists its own children */
	while (d && listed && (e = readdir(d)))
		if (e->d_name[0] != '.')
			listed = read_children(e->d_name, c, out, max, &n);
	if (d)
		closedir(d);
	if (!d || !listed) {
		n = 0;
		scan_children(c, out, max, &n);
	}
	return n;
}

/* "pid 12 (qemu), pid 13 (qemu)" of the first N of PIDS (TOTAL in all) into BUF. */
static const char *name_pids(const pid_t *pids, size_t n, size_t total, char *buf, size_t size)
{
	size_t len = 0;
	char comm[32];

	buf[0] = 0;
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%spid %d (%s)", i ? ", " : "",
					pids[i], comm_of(pids[i], comm, sizeof(comm)));
	if (total > n && len < size)
		snprintf(buf + len, size - len, " and %zu more", total - n);
	return buf;
}

bool command_done(struct command *c, const char *name)
{
	pid_t left[4];
	size_t n;
	char buf[256];

	if (c->pid > 0) {
		if (waitpid(c->pid, &c->status, WNOHANG) != c->pid)
			return false;
		c->pid = 0;
		c->reaped = true;
		n = command_orphans(c, left, 4);
		if (n)
			elog("'%s' exited; tracing goes on until its descendants exit: %s", name,
			     name_pids(left, n < 4 ? n : 4, n, buf, sizeof(buf)));
		return !n;
	}
	return c->reaped && !command_orphans(c, left, 1);
}

/* Whether the command has exited within SECS (its status kept). */
static bool reaped_within(struct command *c, int secs)
{
	struct timespec step = {0, 10000000};

	for (int i = 0; i < secs * 100; i++) {
		if (waitpid(c->pid, &c->status, WNOHANG) == c->pid)
			return true;
		nanosleep(&step, NULL);
	}
	return false;
}

void command_stop(struct command *c, const char *name)
{
	pid_t left[4];
	size_t n;
	char buf[256];

	if (c->pid > 0 && !c->released) {
		/* still held: it never ran. Its pipe's end tells it to leave unrun. */
		close(c->release_fd);
		c->release_fd = -1;
		waitpid(c->pid, &c->status, 0);
		c->pid = 0;
		c->never_ran = true;
		return;
	}
	if (c->pid > 0) {
		c->stopped = true;
		kill(c->pid, SIGTERM);
		if (!reaped_within(c, CHILD_TERM_SECS)) {
			elog("'%s' (pid %d) ignored SIGTERM for %d s: killed", name, c->pid,
			     CHILD_TERM_SECS);
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &c->status, 0);
		}
		c->pid = 0;
		c->reaped = true;
	}
	/* as perf stat does, only the command is stopped: its descendants are the user's */
	n = command_orphans(c, left, 4);
	if (n)
		elog("left running, not followed past the end of tracing: %s",
		     name_pids(left, n < 4 ? n : 4, n, buf, sizeof(buf)));
}

void command_close(struct command *c)
{
	if (c->release_fd >= 0)
		close(c->release_fd);
	c->release_fd = -1;
}
