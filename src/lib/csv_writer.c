// SPDX-License-Identifier: GPL-2.0
/* Writer for the kvmmmu CSV format v1 (docs/csv.md). */
#include <errno.h>
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

int csv_writer_start(struct csv_writer *w, FILE *f, const struct csv_meta *meta)
{
	char buf[256], host[256] = "unknown";
	time_t now = time(NULL);
	struct tm tm;

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
	return ferror(f) ? -EIO : 0;
}

int csv_writer_open(struct csv_writer *w, const char *path, const struct csv_meta *meta)
{
	FILE *f;

	memset(w, 0, sizeof(*w));
	if (!strcmp(path, "-")) {
		f = stdout;
	} else {
		f = fopen(path, "w");
		if (!f)
			return -errno;
		w->owns_file = true;
	}
	return csv_writer_start(w, f, meta);
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
		fprintf(f, ",%" PRIu64 "\n", r->u64);
	else
		fprintf(f, ",%.9g\n", r->f64);
	return ferror(f) ? -EIO : 0;
}

int csv_writer_close(struct csv_writer *w)
{
	int err = 0;

	if (!w->f)
		return 0;
	if (fflush(w->f) || ferror(w->f))
		err = -EIO;
	if (w->owns_file && fclose(w->f) && !err)
		err = -errno;
	w->f = NULL;
	return err;
}
