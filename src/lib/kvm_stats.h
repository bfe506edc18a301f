/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM binary statistics (KVM_GET_STATS_FD, Linux 5.14+): descriptors are
 * looked up by name, never by offset, because the set differs per kernel
 * and per vendor module.
 */
#ifndef KVMMMU_KVM_STATS_H
#define KVMMMU_KVM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kvm_stat_desc_info {
	char *name;
	uint32_t flags; /* KVM_STATS_TYPE_* | KVM_STATS_UNIT_* | KVM_STATS_BASE_* */
	int16_t exponent;
	uint16_t size;	 /* number of u64 values (>1 for histograms) */
	uint32_t offset; /* byte offset from the data block */
	uint32_t bucket_size;
	size_t value_index; /* index of the first value in kvm_stats.values */
};

struct kvm_stats {
	int fd;	      /* the stats fd; with debugfs, the VM's debugfs directory */
	bool debugfs; /* read from KVM's debugfs files, one per statistic */
	char *id;
	uint32_t data_offset;
	size_t n_desc;
	struct kvm_stat_desc_info *desc;
	size_t n_values;
	uint64_t *values;
	size_t data_len; /* bytes of the data block */
	/*
	 * desc never changes once read: copies share it, and so do a VM's
	 * vCPUs (kvm_stats_share_descs()). This counts its holders (NULL: this
	 * one holds it alone). A snapshot a second would otherwise copy some
	 * 70 stats fds' names, and a renderer compare them by strcmp().
	 */
	unsigned int *desc_refs;
};

/*
 * Parses the header and descriptors from BUF (the first LEN bytes of a stats
 * file). Pure: used by kvm_stats_open and by the unit tests.
 */
int kvm_stats_parse(struct kvm_stats *s, const void *buf, size_t len);
/* Takes ownership of STATS_FD (from KVM_GET_STATS_FD) and parses it. */
int kvm_stats_open(struct kvm_stats *s, int stats_fd);
/* Issues KVM_GET_STATS_FD on a VM or vCPU fd, then kvm_stats_open. */
int kvm_stats_open_kvm_fd(struct kvm_stats *s, int kvm_fd);
/*
 * The statistics in one of KVM's debugfs directories (/sys/kernel/debug/kvm/
 * PID-FD: a VM's, its vCPUs' summed), for a VMM that keeps no stats fd open.
 * A file's mode gives the type: KVM makes counters and peaks clearable
 * (0644), instant values read-only; peaks are named max_*. Histograms are
 * left out: debugfs shows their first bucket only.
 */
int kvm_stats_open_debugfs(struct kvm_stats *s, const char *dir);
/*
 * S holds LIKE's descriptors instead of its own where the two sets are the
 * same (a VM's vCPUs, which one kernel describes alike); true if it does.
 */
bool kvm_stats_share_descs(struct kvm_stats *s, const struct kvm_stats *like);
/* Re-reads the data block (values are live in the kernel). */
int kvm_stats_refresh(struct kvm_stats *s);
const struct kvm_stat_desc_info *kvm_stats_find(const struct kvm_stats *s, const char *name);
/* First value of a named statistic; returns -ENOENT when the kernel lacks it. */
int kvm_stats_get(const struct kvm_stats *s, const char *name, uint64_t *value);
const char *kvm_stats_type_name(uint32_t flags);
/*
 * A copy of SRC's values, without its fd, sharing its descriptors (for
 * snapshots, which other threads may close); 0, -ENOMEM, or -EINVAL for
 * descriptors not read by this file's functions.
 */
int kvm_stats_copy(struct kvm_stats *dst, const struct kvm_stats *src);
/* A malloc()ed copy of S's values as last read (a baseline or a mark), or NULL. */
uint64_t *kvm_stats_values_dup(const struct kvm_stats *s);
void kvm_stats_close(struct kvm_stats *s);

#endif
