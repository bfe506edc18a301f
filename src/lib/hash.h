/* SPDX-License-Identifier: GPL-2.0 */
/* FNV-1a, for the hash tables that keep lookups linear over thousands of VMs. */
#ifndef KVMMMU_HASH_H
#define KVMMMU_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_INIT 1469598103934665603ULL

static inline size_t hash_str(size_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static inline size_t hash_u64(size_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211ULL;
}

#endif
