// SPDX-License-Identifier: GPL-2.0
/*
 * Once the programs are attached and the socket bound, the exporter needs
 * almost nothing it was started with: BPF maps, links and ring buffers are
 * file descriptors it holds, and /proc's names and thread lists are readable
 * by anyone. What stays is CAP_SYS_PTRACE, for the kvm_stats collector:
 * KVM's statistics fds of each VM that starts later are taken from its VMM
 * with pidfd_getfd(). The bounding set goes too, and no_new_privs is set,
 * so nothing this process runs can get any back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "exporter.h"
#include "log.h"

int caps_drop_unneeded(const struct exporter *e)
{
	bool ptrace = e->env.prom.collector[PROM_KVM_STATS];
	cap_value_t keep[] = {CAP_SYS_PTRACE};
	int n_keep = ptrace ? 1 : 0;
	cap_t caps;
	int err = 0;

	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
		if (n_keep && c == CAP_SYS_PTRACE)
			continue;
		if (cap_drop_bound(c) && errno != EINVAL) {
			err = -errno;
			break;
		}
	}
	caps = cap_init(); /* everything cleared */
	if (!caps)
		return -ENOMEM;
	if (!err && n_keep &&
	    (cap_set_flag(caps, CAP_PERMITTED, n_keep, keep, CAP_SET) ||
	     cap_set_flag(caps, CAP_EFFECTIVE, n_keep, keep, CAP_SET)))
		err = -errno;
	if (!err && cap_set_proc(caps))
		err = -errno;
	cap_free(caps);
	if (!err && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		err = -errno;
	if (err)
		return err;
	if (ptrace)
		fprintf(stderr, "kvmmmu-exporter: dropped every capability but CAP_SYS_PTRACE "
				"(KVM's statistics fds of VMs that start later, with "
				"pidfd_getfd; --no-collector.kvm_stats drops it too)\n");
	else
		fprintf(stderr, "kvmmmu-exporter: dropped every capability\n");
	return 0;
}
