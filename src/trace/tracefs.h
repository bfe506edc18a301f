/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMMMU_TRACEFS_H
#define KVMMMU_TRACEFS_H

#include <stdbool.h>

/* tracefs mount point, mounting it at /sys/kernel/tracing if nothing is mounted; NULL if none. */
const char *tracefs_dir(void);
/* Contents of events/GROUP/EVENT/format, malloc()ed; NULL when absent. */
char *tracefs_read_format(const char *group, const char *event);
bool tracefs_has_event(const char *group, const char *event);
/* An event's format text FMT declares a field named FIELD ("field:TYPE FIELD;"). */
bool tracefs_format_has_field(const char *fmt, const char *field);
/* GROUP:EVENT's format in tracefs has a field named FIELD. */
bool tracefs_event_has_field(const char *group, const char *event, const char *field);
/* Whether probe events can be made (CONFIG_KPROBE_EVENTS). */
bool tracefs_has_kprobe_events(void);

#endif
