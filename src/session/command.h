/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command a session runs (kvmmmu-hist -- COMMAND): forked held, so that
 * its pid is traced before it runs, released once everything is attached,
 * never orphaned, and stopped as perf stat stops its own.
 */
#ifndef KVMMMU_COMMAND_H
#define KVMMMU_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

struct command {
	pid_t pid; /* 0 once reaped */
	int status;
	bool stopped;	/* we ended it (Ctrl-C, -d): its status is ours, not its own */
	bool released;	/* it was let run */
	bool never_ran; /* tracing ended while it was held: no status of its own */
	bool reaped;	/* it has exited (its descendants may still run) */
	bool subreaper; /* its orphaned descendants are given to us */
	int release_fd; /* it execs once we write to it; -1: none */
};

/* Whether execvp() would find CMD (errno says why not). */
bool command_exists(const char *cmd);
/*
 * Forks ARGV held; TO_STDERR: its stdout goes to our stderr (our stdout is
 * a CSV). Its pid, or -errno.
 */
pid_t command_start(struct command *c, char **argv, bool to_stderr);
/* Lets it run. */
void command_release(struct command *c);
/*
 * Whether it and every descendant that outlived it have exited (it is
 * reaped when it exits: its status is kept; NAME for the note saying which
 * descendants are still followed).
 */
bool command_done(struct command *c, const char *name);
/*
 * Its descendants that outlived it (given to us as their subreaper) and
 * still run: up to MAX pids into OUT; how many there are. Reaps those that
 * have exited.
 */
size_t command_orphans(const struct command *c, pid_t *out, size_t max);
/*
 * SIGTERM, and SIGKILL if it outlives that by CHILD_TERM_SECS (NAME for the
 * note); one still held never runs. Names the descendants left running.
 */
void command_stop(struct command *c, const char *name);
void command_close(struct command *c);

#endif
