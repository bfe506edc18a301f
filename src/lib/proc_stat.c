// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "proc_stat.h"

bool proc_stat_parse(const char *line, struct proc_stat *st)
{
	/* "PID (COMM) S ...": the fields after COMM start past its last ')' */
	const char *p = strrchr(line, ')');
	int n;

	memset(st, 0, sizeof(*st));
	if (!p || p[1] != ' ')
		return false;
	/* 3 state, 4 ppid, 5-13 skipped, 14 utime, 15 stime, 16-21 skipped, 22-24 */
	n = sscanf(p + 2,
		   "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d "
		   "%llu %llu %lld",
		   &st->state, &st->ppid, &st->utime, &st->stime, &st->starttime, &st->vsize,
		   &st->rss);
	return n == 7;
}
