/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How each probe was had on this kernel, or why not: what every report
 * states about its own figures (the sources fill these, renderers show them).
 */
#ifndef KVMMMU_PROBE_STATUS_H
#define KVMMMU_PROBE_STATUS_H

#include <stdbool.h>

enum attach_kind {
	ATTACH_NONE,
	ATTACH_FENTRY,
	ATTACH_KPROBE,
	ATTACH_TP_BTF,
	ATTACH_RAW_TP,
	ATTACH_FSESSION, /* one program at a function's entry and exit (7.0) */
};

struct probe_status {
	const char *name;  /* function, or tracepoint event name */
	const char *group; /* "kvmmmu", "kvm", or NULL for functions */
	bool optional;	   /* off unless asked for (costs events on every fault) */
	bool wanted;
	enum attach_kind kind;
	char why[192]; /* why it is not attached */
};

/* "fentry", "kprobe", "tp_btf", "raw_tp", "fsession", or "unavailable" (ATTACH_NONE). */
const char *attach_kind_str(enum attach_kind k);

#endif
