// SPDX-License-Identifier: GPL-2.0
/* KVM binary statistics reader (Documentation/virt/kvm/api.rst, KVM_GET_STATS_FD). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvm_stats.h"

/* Upper bounds that no kernel comes near; they keep a corrupt header from allocating wildly. */
#define MAX_NAME_SIZE 4096
#define MAX_DESCS 65536

/* S's descriptors, read: from now on copies share them. */
static int share_descs(struct kvm_stats *s)
{
	s->desc_refs = malloc(sizeof(*s->desc_refs));
	if (!s->desc_refs)
		return -ENOMEM;
	*s->desc_refs = 1;
	return 0;
}

int kvm_stats_parse(struct kvm_stats *s, const void *buf, size_t len)
{
	const struct kvm_stats_header *h = buf;
	size_t desc_len, n_values = 0;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (len < sizeof(*h))
		return -EINVAL;
	if (!h->name_size || h->name_size > MAX_NAME_SIZE || h->num_desc > MAX_DESCS)
		return -EINVAL;
	desc_len = sizeof(struct kvm_stats_desc) + h->name_size;
	if (h->id_offset > len || len - h->id_offset < h->name_size || h->desc_offset > len ||
	    (len - h->desc_offset) / desc_len < h->num_desc)
		return -EINVAL;

	s->id = strndup((const char *)buf + h->id_offset, h->name_size);
	s->desc = calloc(h->num_desc ? h->num_desc : 1, sizeof(*s->desc));
	if (!s->id || !s->desc)
		goto nomem;
	s->data_offset = h->data_offset;
	s->n_desc = h->num_desc;
	for (size_t i = 0; i < s->n_desc; i++) {
		const struct kvm_stats_desc *d =
			(const void *)((const char *)buf + h->desc_offset + i * desc_len);
		struct kvm_stat_desc_info *info = &s->desc[i];

		if (!d->size) {
			kvm_stats_close(s);
			return -EINVAL;
		}
		info->name = strndup(d->name, h->name_size);
		if (!info->name)
			goto nomem;
		info->flags = d->flags;
		info->exponent = d->exponent;
		info->size = d->size;
		info->offset = d->offset;
		info->bucket_size = d->bucket_size;
		info->value_index = n_values;
		n_values += d->size;
		if (d->offset + d->size * sizeof(uint64_t) > s->data_len)
			s->data_len = d->offset + d->size * sizeof(uint64_t);
	}
	s->n_values = n_values;
	s->values = calloc(n_values ? n_values : 1, sizeof(uint64_t));
	if (!s->values || share_descs(s))
		goto nomem;
	return 0;
nomem:
	kvm_stats_close(s);
	return -ENOMEM;
}

int kvm_stats_open(struct kvm_stats *s, int stats_fd)
{
	struct kvm_stats_header h;
	size_t len;
	void *buf;
	ssize_t rd;
	int err;

	rd = pread(stats_fd, &h, sizeof(h), 0);
	if (rd != sizeof(h)) {
		err = rd < 0 ? -errno : -EINVAL;
		close(stats_fd);
		return err;
	}
	/* Everything before the data block: header, id and descriptors. */
	len = h.data_offset;
	if (len < sizeof(h) || len > (size_t)MAX_DESCS * (MAX_NAME_SIZE + 64)) {
		close(stats_fd);
		return -EINVAL;
	}
	buf = malloc(len);
	if (!buf) {
		close(stats_fd);
		return -ENOMEM;
	}
	rd = pread(stats_fd, buf, len, 0);
	err = rd == (ssize_t)len ? kvm_stats_parse(s, buf, len) : (rd < 0 ? -errno : -EINVAL);
	free(buf);
	if (err) {
		close(stats_fd);
		return err;
	}
	s->fd = stats_fd;
	/* callers take an error as "nothing open": a first read that fails leaves nothing */
	err = kvm_stats_refresh(s);
	if (err)
		kvm_stats_close(s);
	return err;
}

int kvm_stats_open_kvm_fd(struct kvm_stats *s, int kvm_fd)
{
	int fd = ioctl(kvm_fd, KVM_GET_STATS_FD, NULL);

	if (fd < 0)
		return -errno;
	return kvm_stats_open(s, fd);
}

static uint32_t debugfs_type(const char *name, mode_t mode)
{
	if (!(mode & 0222))
		return KVM_STATS_TYPE_INSTANT;
	return strncmp(name, "max_", 4) ? KVM_STATS_TYPE_CUMULATIVE : KVM_STATS_TYPE_PEAK;
}

static bool is_hist(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && !strcmp(name + n - 5, "_hist");
}

/* One statistic's file, read whole: "123\n"; -EIO if it holds anything else. */
static int read_debugfs_value(int dir_fd, const char *name, uint64_t *value)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC), err;
	char buf[32], *end;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : n == 0 ? -EIO : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	errno = 0;
	*value = strtoull(buf, &end, 10);
	return errno || end == buf || (*end && *end != '\n') ? -EIO : 0;
}

int kvm_stats_open_debugfs(struct kvm_stats *s, const char *dir)
{
	struct kvm_stat_desc_info *d;
	struct dirent *e;
	struct stat st;
	size_t cap = 0;
	DIR *listing;
	int fd, err;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	listing = fdopendir(dup(fd));
	if (!listing) {
		err = -errno;
		close(fd);
		return err;
	}
	s->fd = fd;
	s->debugfs = true;
	s->id = strdup(dir);
	err = s->id ? 0 : -ENOMEM;
	while (!err && (e = readdir(listing))) {
		uint64_t value;
		int r;

		if (e->d_name[0] == '.' || is_hist(e->d_name) || fstatat(fd, e->d_name, &st, 0) ||
		    !S_ISREG(st.st_mode))
			continue;
		/*
		 * x86 adds files that are no statistic, mmu_rmaps_stat (a table)
		 * among them: skipped. A lockdown refuses the writable ones, the
		 * counters (-EPERM): then this directory is no use.
		 */
		r = read_debugfs_value(fd, e->d_name, &value);
		if (r == -EIO)
			continue;
		if (r) {
			err = r;
			break;
		}
		if (s->n_desc == cap) {
			cap = cap ? 2 * cap : 64;
			d = realloc(s->desc, cap * sizeof(*d));
			if (!d) {
				err = -ENOMEM;
				break;
			}
			s->desc = d;
		}
		d = &s->desc[s->n_desc];
		memset(d, 0, sizeof(*d));
		d->name = strdup(e->d_name);
		if (!d->name) {
			err = -ENOMEM;
			break;
		}
		d->flags = debugfs_type(e->d_name, st.st_mode);
		d->size = 1;
		d->value_index = s->n_desc++;
	}
	closedir(listing);
	s->n_values = s->n_desc;
	s->values = err ? NULL : calloc(s->n_values ? s->n_values : 1, sizeof(uint64_t));
	if (!err && !s->values)
		err = -ENOMEM;
	if (!err && !s->n_desc)
		err = -ENOENT;
	if (!err)
		err = share_descs(s);
	if (!err)
		err = kvm_stats_refresh(s);
	if (err)
		kvm_stats_close(s);
	return err;
}

/*
 * Every statistic, all or none: once the VM is gone its files are, and the
 * values stay those of the last full reading.
 */
static int refresh_debugfs(struct kvm_stats *s)
{
	uint64_t *got = malloc((s->n_values ? s->n_values : 1) * sizeof(*got));
	int err = got ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < s->n_desc; i++)
		err = read_debugfs_value(s->fd, s->desc[i].name, &got[i]);
	if (!err)
		memcpy(s->values, got, s->n_values * sizeof(*got));
	free(got);
	return err;
}

int kvm_stats_refresh(struct kvm_stats *s)
{
	uint64_t *data;
	ssize_t rd;

	if (s->fd < 0)
		return -EBADF;
	if (s->debugfs)
		return refresh_debugfs(s);
	if (!s->data_len)
		return 0;
	data = malloc(s->data_len);
	if (!data)
		return -ENOMEM;
	rd = pread(s->fd, data, s->data_len, s->data_offset);
	if (rd != (ssize_t)s->data_len) {
		free(data);
		return rd < 0 ? -errno : -EIO;
	}
	for (size_t i = 0; i < s->n_desc; i++) {
		const struct kvm_stat_desc_info *d = &s->desc[i];

		memcpy(&s->values[d->value_index], (char *)data + d->offset,
		       d->size * sizeof(uint64_t));
	}
	free(data);
	return 0;
}

const struct kvm_stat_desc_info *kvm_stats_find(const struct kvm_stats *s, const char *name)
{
	for (size_t i = 0; i < s->n_desc; i++)
		if (!strcmp(s->desc[i].name, name))
			return &s->desc[i];
	return NULL;
}

int kvm_stats_get(const struct kvm_stats *s, const char *name, uint64_t *value)
{
	const struct kvm_stat_desc_info *d = kvm_stats_find(s, name);

	if (!d)
		return -ENOENT;
	*value = s->values[d->value_index];
	return 0;
}

const char *kvm_stats_type_name(uint32_t flags)
{
	switch (flags & KVM_STATS_TYPE_MASK) {
	case KVM_STATS_TYPE_CUMULATIVE:
		return "cumulative";
	case KVM_STATS_TYPE_INSTANT:
		return "instant";
	case KVM_STATS_TYPE_PEAK:
		return "peak";
	case KVM_STATS_TYPE_LINEAR_HIST:
		return "linear_hist";
	case KVM_STATS_TYPE_LOG_HIST:
		return "log_hist";
	default:
		return "unknown";
	}
}

/* S lets go of its descriptors; the last holder frees them (acquire: after every other's reads). */
static void put_descs(const struct kvm_stats *s)
{
	if (s->desc_refs && __atomic_sub_fetch(s->desc_refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (size_t i = 0; s->desc && i < s->n_desc; i++)
		free(s->desc[i].name);
	free(s->desc);
	free(s->desc_refs);
}

static bool same_desc(const struct kvm_stat_desc_info *a, const struct kvm_stat_desc_info *b)
{
	return a->flags == b->flags && a->exponent == b->exponent && a->size == b->size &&
	       a->offset == b->offset && a->bucket_size == b->bucket_size &&
	       a->value_index == b->value_index && !strcmp(a->name, b->name);
}

bool kvm_stats_share_descs(struct kvm_stats *s, const struct kvm_stats *like)
{
	struct kvm_stats mine = *s;

	if (!like->desc_refs || !s->desc_refs || s->desc == like->desc ||
	    s->n_desc != like->n_desc || s->debugfs != like->debugfs)
		return s->desc == like->desc;
	for (size_t i = 0; i < s->n_desc; i++)
		if (!same_desc(&s->desc[i], &like->desc[i]))
			return false;
	__atomic_add_fetch(like->desc_refs, 1, __ATOMIC_RELAXED);
	s->desc = like->desc;
	s->desc_refs = like->desc_refs;
	put_descs(&mine);
	return true;
}

int kvm_stats_copy(struct kvm_stats *dst, const struct kvm_stats *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->fd = -1;
	/* every set read (kvm_stats_parse(), _open_debugfs()) is shareable */
	if (src->n_desc && !src->desc_refs)
		return -EINVAL;
	dst->data_offset = src->data_offset;
	dst->data_len = src->data_len;
	dst->id = src->id ? strdup(src->id) : NULL;
	dst->values = calloc(src->n_values ? src->n_values : 1, sizeof(*dst->values));
	if ((src->id && !dst->id) || !dst->values) {
		kvm_stats_close(dst);
		return -ENOMEM;
	}
	memcpy(dst->values, src->values, src->n_values * sizeof(*dst->values));
	dst->n_values = src->n_values;
	if (src->desc_refs) {
		__atomic_add_fetch(src->desc_refs, 1, __ATOMIC_RELAXED);
		dst->desc_refs = src->desc_refs;
		dst->desc = src->desc;
		dst->n_desc = src->n_desc;
	}
	return 0;
}

void kvm_stats_close(struct kvm_stats *s)
{
	put_descs(s);
	free(s->id);
	free(s->values);
	if (s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

uint64_t *kvm_stats_values_dup(const struct kvm_stats *s)
{
	uint64_t *copy = malloc((s->n_values ? s->n_values : 1) * sizeof(*copy));

	if (copy)
		memcpy(copy, s->values, s->n_values * sizeof(*copy));
	return copy;
}
