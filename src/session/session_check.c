// SPDX-License-Identifier: GPL-2.0
/*
 * session_check() (session.h): the options can work before anything loads:
 * each -p names a VM (unless waiting for one), the command can be run.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "session.h"
#include "command.h"
#include "log.h"

#define MAX_MATCHES 1024 /* processes one -p considers */

/* -p SPEC must name a running VM: a process with a KVM VM open. */
static int check_spec(const struct proc_spec *spec)
{
	int pids[MAX_MATCHES], n = procs_find("/proc", spec, 1, getpid(), pids, MAX_MATCHES);
	char comm[64];

	if (n <= 0) {
		if (spec->pid)
			elog("no process with PID %d", spec->pid);
		else
			elog("no process matches '%s' (use --wait to wait for it)", spec->text);
		return -ESRCH;
	}
	for (int i = 0; i < n; i++)
		if (proc_is_vmm("/proc", pids[i]))
			return 0;
	if (spec->pid) {
		proc_comm("/proc", spec->pid, 0, comm, sizeof(comm));
		elog("process %d (%s) is not a VM: it has no KVM VM open", spec->pid, comm);
	} else {
		elog("'%s' matches %d process%s, none of them a VM (no KVM VM open; --wait to "
		     "wait for one)",
		     spec->text, n, n == 1 ? "" : "es");
	}
	return -ENOENT;
}

int session_check(const struct session_opts *opts)
{
	for (int i = 0; i < opts->n_specs; i++) {
		const struct proc_spec *spec = &opts->specs[i];
		int err;

		/* waiting, a name may yet appear, and a process may yet open its VM; a PID
		 * that is no process now never will be one */
		if (opts->wait && !(spec->pid && kill(spec->pid, 0) && errno == ESRCH))
			continue;
		err = check_spec(spec);
		if (err)
			return err;
	}
	if (opts->command && !command_exists(opts->command[0])) {
		int err = -errno;

		elog("cannot run '%s': %s", opts->command[0], strerror(-err));
		return err;
	}
	return 0;
}
