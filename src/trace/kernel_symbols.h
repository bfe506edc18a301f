/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel text addresses to names, from /proc/kallsyms: the frames of the
 * stacks BPF keeps (--slower --stack). Loaded once, when first needed.
 */
#ifndef KVMMMU_KERNEL_SYMBOLS_H
#define KVMMMU_KERNEL_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct kernel_symbols;

/*
 * The text symbols of PATH (NULL: /proc/kallsyms), sorted by address; NULL
 * with errno set if it cannot be read, or ENOENT when it shows no addresses
 * (kptr_restrict, or not root).
 */
struct kernel_symbols *kernel_symbols_load(const char *path);
/*
 * ADDR as "function+0xoffset", with " [module]" for a module's, into BUF;
 * false (BUF: the bare address) when no symbol precedes it.
 */
bool kernel_symbols_name(const struct kernel_symbols *ks, __u64 addr, char *buf, size_t len);
void kernel_symbols_free(struct kernel_symbols *ks);

#endif
