// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-diff's reading of a run under arbitrary input: the CSV reader,
 * the snapshot loader (src/core/snapshot_csv.c: a figure twice in one
 * report, buckets that drop) and the derivation of every scalar
 * (src/diff/derive.c). Shared by the libFuzzer target (tests/fuzz/
 * fuzz_diff.c, make fuzz) and the corpus replay among the unit tests
 * (tests/unit/test_csv_corpus.c), which make sanitize runs under ASan and
 * UBSan. Included by both, hence static.
 *
 * Whatever the bytes: no crash, no leak, no read out of bounds; a run it
 * refuses comes with a one-line reason, and one it accepts has only finite
 * figures (an infinity or a NaN would be a silently wrong number in the
 * report).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "derive.h"
#include "target_check.h"

static int diff_target(const uint8_t *data, size_t size)
{
	char path[64], err[512] = "";
	struct run r;
	int fd, rc;

	/* run_load reads a path: an anonymous file, so nothing reaches a disk */
	fd = memfd_create("diff_target", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&r, 0, sizeof(r));
	rc = run_load(&r, path, err, sizeof(err));
	if (rc) {
		TARGET_CHECK(rc < 0);
		TARGET_CHECK(err[0] && !strchr(err, '\n'));
	} else {
		for (size_t i = 0; i < r.n; i++) {
			TARGET_CHECK(isfinite(r.s[i].value));
			TARGET_CHECK(run_find(&r, r.s[i].vm, r.s[i].vcpu, r.s[i].metric));
		}
	}
	run_free(&r);
	close(fd);
	return 0;
}
