/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every entry of a BPF hash map, read in batches where the kernel has
 * batch lookups (5.6+: one syscall per batch of entries), else one
 * get-next-key and one lookup per entry. Entries that come and go while it
 * reads may or may not be seen, as with any walk of a live map.
 */
#ifndef KVMMMU_MAP_ITER_H
#define KVMMMU_MAP_ITER_H

#include <stddef.h>

/* FN's non-zero return stops the walk and is returned. */
typedef int (*map_each_fn)(const void *key, const void *value, void *ctx);

/* Calls FN for every entry of map FD (keys of KEY_SIZE, values of VALUE_SIZE bytes); 0 or -errno.
 */
int map_each(int fd, size_t key_size, size_t value_size, map_each_fn fn, void *ctx);

#endif
