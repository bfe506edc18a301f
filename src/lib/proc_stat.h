/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_PROC_STAT_H
#define KVMMMU_PROC_STAT_H

/* The fields of a /proc/PID/stat line that kvmmmu reads (proc(5)'s numbering). */
#include <stdbool.h>

struct proc_stat {
	char state;			 /* 3 */
	int ppid;			 /* 4 */
	unsigned long long utime, stime; /* 14, 15: clock ticks */
	unsigned long long starttime;	 /* 22: clock ticks after boot */
	unsigned long long vsize;	 /* 23: bytes */
	long long rss;			 /* 24: pages */
};

/* Parses LINE; false when it is no stat line. COMM (2) may hold spaces and ')'. */
bool proc_stat_parse(const char *line, struct proc_stat *st);

#endif
