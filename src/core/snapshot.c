// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
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

const struct vm_stats *snapshot_vm_kvm(const struct snapshot *snap, const struct vm_row *vm)
{
	if (model_process_vms(&snap->m, vm->pid) > 1)
		return NULL; /* the process's stats fds are not told apart by VM */
	return snapshot_kvm(snap, vm->pid);
}

bool snapshot_kvm_shared(const struct snapshot *snap, const struct vm_row *vm)
{
	return model_process_vms(&snap->m, vm->pid) > 1 && snapshot_kvm(snap, vm->pid);
}

void snapshot_vm_place(const struct snapshot *snap, const struct vm_row *vm, char *buf, size_t size)
{
	if (model_process_vms(&snap->m, vm->pid) > 1)
		snprintf(buf, size, "VM pid %d #%d", vm->pid, vm->index);
	else
		snprintf(buf, size, "VM pid %d", vm->pid);
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
	regions_free(&snap->regions);
	for (size_t i = 0; i < snap->n_names; i++)
		free(snap->names[i]);
	free(snap->names);
	memset(snap, 0, sizeof(*snap));
}
