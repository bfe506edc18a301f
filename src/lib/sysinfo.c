// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "sysinfo.h"

const char *sysinfo_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return NULL;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

const char *sysinfo_tdp_mmu(char *buf, size_t len)
{
	if (!sysinfo_read_line("/sys/module/kvm/parameters/tdp_mmu", buf, len))
		snprintf(buf, len, "unknown");
	return buf;
}

bool sysinfo_release_at_least(const char *release, int major, int minor)
{
	int ma, mi;

	if (sscanf(release, "%d.%d", &ma, &mi) != 2)
		return true;
	return ma > major || (ma == major && mi >= minor);
}

bool sysinfo_vmx_ept(void)
{
	char buf[8];

	return sysinfo_read_line("/sys/module/kvm_intel/parameters/ept", buf, sizeof(buf)) &&
	       (buf[0] == 'Y' || buf[0] == '1');
}

const char *sysinfo_kernel_release(char *buf, size_t len)
{
	struct utsname u;

	snprintf(buf, len, "%s", uname(&u) ? "unknown" : u.release);
	return buf;
}

uint64_t sysinfo_mem_available(void)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

static double clock_seconds(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double sysinfo_now(void)
{
	return clock_seconds(CLOCK_REALTIME);
}

double sysinfo_monotonic(void)
{
	return clock_seconds(CLOCK_MONOTONIC);
}

long long sysinfo_open_fds(int pid)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/fd");
	return stat(path, &st) ? 0 : (long long)st.st_size;
}

char *sysinfo_join_argv(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int sysinfo_tdp_mmu_param(void)
{
	char buf[16];

	sysinfo_tdp_mmu(buf, sizeof(buf));
	return buf[0] == 'Y' ? 1 : buf[0] == 'N' ? 0 : -1;
}
