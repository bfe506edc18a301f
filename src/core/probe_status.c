// SPDX-License-Identifier: GPL-2.0
#include "probe_status.h"

const char *attach_kind_str(enum attach_kind k)
{
	static const char *const names[] = {"unavailable", "fentry", "kprobe",
					    "tp_btf",	   "raw_tp", "fsession"};
	return names[k];
}
