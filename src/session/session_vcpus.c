// SPDX-License-Identifier: GPL-2.0
/* Whether a vCPU number names a vCPU of the VMs a session selects (--vcpu N). */
#include <unistd.h>

#include "session.h"

#define MAX_LOOKED_AT 1024 /* processes one look at /proc considers at once */
#define MAX_VCPU_FDS 512

/* Whether PID holds a kvm-vcpu fd of vCPU VCPU. */
static bool pid_has_vcpu(int pid, int vcpu)
{
	int ids[MAX_VCPU_FDS], n = vcpu_fds("/proc", pid, ids, MAX_VCPU_FDS);

	for (int k = 0; k < n; k++)
		if (ids[k] == vcpu)
			return true;
	return false;
}

bool session_selects_vcpu(const struct session_opts *o, int vcpu)
{
	static int pids[MAX_LOOKED_AT];
	int n = 0;

	if (!o->n_specs)
		return true; /* any VM, now or later: checked at the end */
	for (int i = 0; i < o->n_specs; i++) {
		int found = procs_find("/proc", &o->specs[i], 1, getpid(), pids + n,
				       MAX_LOOKED_AT - (size_t)n);

		n += found > 0 ? found : 0;
	}
	for (int i = 0; i < n; i++)
		if (pid_has_vcpu(pids[i], vcpu))
			return true;
	return false;
}

bool session_has_vcpu(const struct session *s, const struct model *final, int vcpu)
{
	for (size_t i = 0; i < s->traced.n; i++)
		if (pid_has_vcpu(s->traced.v[i], vcpu))
			return true;
	/* a VM gone by now: its vCPUs are in its figures */
	for (size_t i = 0; final && i < final->n_vms; i++)
		for (size_t k = 0; k < final->vms[i].n_rows; k++)
			if (final->vms[i].rows[k].vcpu == vcpu)
				return true;
	return false;
}
