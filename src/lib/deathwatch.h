/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_DEATHWATCH_H
#define KVMMMU_DEATHWATCH_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * A helper process that undoes something if we die without saying goodbye,
 * even by SIGKILL: it waits on a pipe whose write end only we hold, and EOF
 * without our goodbye means we are gone. It holds none of our other fds (a
 * BPF link or perf fd kept there would outlive us), and it ignores the
 * signals a Ctrl-C sends our whole process group.
 */
struct deathwatch {
	pid_t pid; /* 0: not started */
	int fd;	   /* write end of its pipe */
};

/* Starts W, which runs ON_DEATH(ARG) if we die first: 0 or -errno. */
int deathwatch_start(struct deathwatch *w, void (*on_death)(void *arg), void *arg);
/* We are done: W leaves without running it, and is reaped. */
void deathwatch_stop(struct deathwatch *w);
/* Whether PID is one of our live helpers (a child that is not a command's). */
bool deathwatch_is_helper(pid_t pid);

#endif
