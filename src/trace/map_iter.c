// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <bpf/bpf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "map_iter.h"

/* The kernel's "operation not supported" (ENOTSUPP), which has no name in user space. */
#define KERNEL_ENOTSUPP 524

/* Entries a batch holds at first: values are up to 8 KiB (thread stats). */
#define FIRST_BATCH 32
/* A hash bucket larger than the batch is refused (ENOSPC): the batch grows to this. */
#define MAX_BATCH 4096

/* One lookup per entry: kernels without batch lookups (before 5.6). */
static int each_by_key(int fd, size_t key_size, void *value, map_each_fn fn, void *ctx)
{
	char *key = malloc(2 * key_size);
	char *next = key + key_size;
	int more, err = 0;

	if (!key)
		return -ENOMEM;
	for (more = !bpf_map_get_next_key(fd, NULL, key); more && !err;
	     memcpy(key, next, key_size)) {
		more = !bpf_map_get_next_key(fd, key, next);
		if (!bpf_map_lookup_elem(fd, key, value))
			err = fn(key, value, ctx);
	}
	free(key);
	return err;
}

int map_each(int fd, size_t key_size, size_t value_size, map_each_fn fn, void *ctx)
{
	/* the batch token: a bucket index for hash maps, never larger than a key */
	char in[64], out[64];
	size_t cap = FIRST_BATCH;
	char *keys = malloc(cap * key_size), *values = malloc(cap * value_size);
	bool first = true;
	int err = 0;

	if (!keys || !values || key_size > sizeof(in)) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	for (;;) {
		__u32 count = (__u32)cap;
		int r = bpf_map_lookup_batch(fd, first ? NULL : in, out, keys, values, &count,
					     NULL);

		if (r && errno == ENOSPC && count == 0 && cap < MAX_BATCH) {
			/* one bucket holds more than a batch: a larger one, from where it was */
			char *k = realloc(keys, 2 * cap * key_size);
			char *v = k ? realloc(values, 2 * cap * value_size) : NULL;

			if (k)
				keys = k;
			if (!v) {
				err = -ENOMEM;
				break;
			}
			values = v;
			cap *= 2;
			continue;
		}
		if (r && first &&
		    (errno == EINVAL || errno == EOPNOTSUPP || errno == KERNEL_ENOTSUPP)) {
			err = each_by_key(fd, key_size, values, fn, ctx);
			break;
		}
		if (r && errno != ENOENT) {
			err = -errno;
			break;
		}
		for (__u32 i = 0; i < count && !err; i++)
			err = fn(keys + i * key_size, values + i * value_size, ctx);
		if (r || err) /* ENOENT: that was the last batch */
			break;
		memcpy(in, out, sizeof(in));
		first = false;
	}
	free(keys);
	free(values);
	return err;
}
