// SPDX-License-Identifier: GPL-2.0
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <string.h>

#include "prog_info.h"

void prog_info_add(const struct bpf_object *obj, struct prog_info_sum *sum)
{
	struct bpf_program *p;

	if (!obj)
		return;
	bpf_object__for_each_program (p, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		memset(&info, 0, sizeof(info));
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		sum->run_time_ns += info.run_time_ns;
		sum->recursion_misses += info.recursion_misses;
	}
}
