// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>

#include "check.h"

#define LABEL_WIDTH 40
#define VERDICT_WIDTH 11

static int failures;

void report_heading(const char *title)
{
	printf("\n%s\n", title);
}

static void item(const char *label, const char *verdict, const char *fmt, va_list ap)
{
	if (!fmt || !*fmt) {
		printf("  %-*s %s\n", LABEL_WIDTH, label, verdict);
		return;
	}
	printf("  %-*s %-*s ", LABEL_WIDTH, label, VERDICT_WIDTH, verdict);
	vprintf(fmt, ap);
	putchar('\n');
}

void report_item(const char *label, const char *verdict, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	item(label, verdict, fmt, ap);
	va_end(ap);
}

void report_fail(const char *label, const char *fmt, ...)
{
	va_list ap;

	failures++;
	va_start(ap, fmt);
	item(label, "FAIL", fmt, ap);
	va_end(ap);
}

int report_failures(void)
{
	return failures;
}

const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}
