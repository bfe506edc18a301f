// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

const struct vm_stats *snapshot_kvm(const struct snapshot *snap, int pid)
{
	for (size_t i = 0; i < snap->n_kvm; i++)
		if (snap->kvm[i].pid == pid)
			return &snap->kvm[i];
	return NULL;
}

void snapshot_free(struct snapshot *snap)
{
	model_free(&snap->m);
	ret_pf_free(&snap->ret_pf);
	free(snap->probes);
	for (size_t i = 0; i < snap->n_kvm; i++)
		vm_stats_close(&snap->kvm[i]);
	free(snap->kvm);
	free(snap->timeline);
	for (size_t i = 0; i < snap->n_names; i++)
		free(snap->names[i]);
	free(snap->names);
	memset(snap, 0, sizeof(*snap));
}
