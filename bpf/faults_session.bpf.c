// SPDX-License-Identifier: GPL-2.0
/*
 * The faults object again, with an fsession program for each function
 * whose entry and exit it probes (FSESSION_PROG). User space loads only
 * those programs from it, on the faults object's own maps (every map,
 * .bss and .rodata included, is reused by fd): the same state, one
 * program a function. Kernels before 7.0 never open it.
 */
#define KVMMMU_FSESSION
#include "faults.bpf.c"
