// SPDX-License-Identifier: GPL-2.0
/* Writer for the kvmmmu CSV format, version 3 (docs/csv.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "csv.h"
#include "sysinfo.h"

void csv_write_field(FILE *f, const char *field)
{
	if (!field)
		return;
	if (!strpbrk(field, ",\"\r\n")) {
		fputs(field, f);
		return;
	}
	fputc('"', f);
	for (const char *p = field; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

static void write_meta(FILE *f, const char *key, const char *value)
{
	/* Metadata values are single-line by construction; flatten anything else. */
	fprintf(f, "# %s=", key);
	for (const char *p = value ? value : ""; *p; p++)
		fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
	fputc('\n', f);
}

int csv_writer_flush(struct csv_writer *w)
{
	size_t done = 0;

	if (!w->f)
		return -EBADF;
	if (fflush(w->f))
		return -errno;
	while (done < w->len) {
		ssize_t n = write(w->fd, w->buf + done, w->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	rewind(w->f); /* the next batch overwrites this one */
	w->len = 0;
	return 0;
}

int csv_writer_start(struct csv_writer *w, int fd, const struct csv_meta *meta)
{
	char buf[256], host[256] = "unknown";
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	f = open_memstream(&w->buf, &w->len);
	if (!f)
		return -errno;
	w->f = f;
	gethostname(host, sizeof(host) - 1);
	fprintf(f, "%s\n", CSV_MAGIC);
	write_meta(f, "kernel", sysinfo_kernel_release(buf, sizeof(buf)));
	write_meta(f, "tdp_mmu", sysinfo_tdp_mmu(buf, sizeof(buf)));
	write_meta(f, "hostname", host);
	write_meta(f, "tool", meta && meta->tool ? meta->tool : "kvmmmu");
	write_meta(f, "version", KVMMMU_VERSION);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	write_meta(f, "start_time", buf);
	write_meta(f, "label", meta ? meta->label : NULL);
	write_meta(f, "command", meta ? meta->command_line : NULL);
	fprintf(f, "%s\n", CSV_HEADER);
	return csv_writer_flush(w);
}

int csv_writer_open(struct csv_writer *w, const char *path, const struct csv_meta *meta)
{
	int fd = 1, err;

	if (strcmp(path, "-")) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
	}
	err = csv_writer_start(w, fd, meta);
	w->owns_fd = fd != 1;
	if (err)
		csv_writer_close(w);
	return err;
}

int csv_write_row(struct csv_writer *w, const struct csv_row *r)
{
	FILE *f = w->f;

	fprintf(f, "%.6f,%d,", r->ts, r->pid);
	csv_write_field(f, r->comm);
	fputc(',', f);
	if (r->vcpu != CSV_NO_VCPU)
		fprintf(f, "%d", r->vcpu);
	fputc(',', f);
	csv_write_field(f, r->source);
	fputc(',', f);
	csv_write_field(f, r->metric);
	fputc(',', f);
	csv_write_field(f, r->le);
	if (r->kind == CSV_U64)
		fprintf(f, ",%" PRIu64 ",", r->u64);
	else
		fprintf(f, ",%.9g,", r->f64);
	csv_write_field(f, r->vm);
	fputc(',', f);
	if (r->vm_index > 0)
		fprintf(f, "%d", r->vm_index);
	fputc('\n', f);
	return ferror(f) ? -ENOMEM : 0;
}

int csv_writer_close(struct csv_writer *w)
{
	int err;

	if (!w->f)
		return 0;
	err = csv_writer_flush(w);
	fclose(w->f);
	free(w->buf);
	if (w->owns_fd && close(w->fd) && !err)
		err = -errno;
	memset(w, 0, sizeof(*w));
	return err;
}
