/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the text report's files (render_text*.c): not for other layers' use. */
#ifndef KVMMMU_RENDER_TEXT_INTERNAL_H
#define KVMMMU_RENDER_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "render.h"

/*
 * FG's figures (a VM's, a vCPU's or a thread's): the sections O asks for, in
 * the report's order. KVM: its counters of the same VM or vCPU (NULL: none);
 * KVM_SHARED: see snapshot_kvm_shared(); VCPU: -1 for the VM's; INTERVAL:
 * KVM's counts since the previous report, not the whole run.
 */
void render_figures(FILE *f, const struct figures *fg, const struct snapshot *snap, bool interval,
		    const struct render_opts *o, const struct vm_stats *kvm, bool kvm_shared,
		    int vcpu);

#endif
