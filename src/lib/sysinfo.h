/* SPDX-License-Identifier: GPL-2.0 */
/* Facts about the host that every report records. */
#ifndef KVMMMU_SYSINFO_H
#define KVMMMU_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "csv.h"

#define KVMMMU_VERSION "0.1.0"

/* The first line of PATH, without its newline, in BUF; NULL when it cannot be read. */
const char *sysinfo_read_line(const char *path, char *buf, size_t len);
/* Contents of /sys/module/kvm/parameters/tdp_mmu ("Y", "N"), or "unknown". */
const char *sysinfo_tdp_mmu(char *buf, size_t len);
/* The same as a number: 1 for Y, 0 for N, -1 when unknown. */
int sysinfo_tdp_mmu_param(void);
const char *sysinfo_kernel_release(char *buf, size_t len);
/* Whether kernel RELEASE ("6.1.0-57-amd64") is MAJOR.MINOR or later; true when it cannot tell. */
bool sysinfo_release_at_least(const char *release, int major, int minor);
/* Whether KVM is kvm_intel with EPT on (its page-fault exits are EPT violations). */
bool sysinfo_vmx_ept(void);
/* MemAvailable from /proc/meminfo, in bytes; 0 when unknown. */
uint64_t sysinfo_mem_available(void);
double sysinfo_now(void); /* CLOCK_REALTIME seconds */
double sysinfo_monotonic(void);
/*
 * How many fds process PID (0: this one) has open, as Linux 6.2 and later
 * give it: the size of /proc/PID/fd, one stat() against a readdir that looks
 * up every fd in it. 0 where the kernel does not say (or PID is gone).
 */
long long sysinfo_open_fds(int pid);
/* Joins argv with spaces into a malloc()ed string. */
char *sysinfo_join_argv(int argc, char **argv);

#endif
