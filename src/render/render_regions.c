// SPDX-License-Identifier: GPL-2.0
/*
 * --metric regions: where in guest memory a VM faults, per memslot and
 * guest-physical region, the most faulted first (text), and every region
 * and memslot (CSV); and where a timeline event's faults before it were.
 */
#include <stdio.h>

#include "render.h"

#define REGIONS_SHOWN 10

/* "1 GiB", "16 MiB", "4 KiB": a region's size. */
static const char *size_name(__u64 bytes, char buf[24])
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;

	while (bytes >= 1024 && !(bytes % 1024) && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, 24, "%llu %s", (unsigned long long)bytes, units[u]);
	return buf;
}

void render_regions(FILE *f, const struct snapshot *snap, const struct vm_row *vm)
{
	const struct regions *r = &snap->regions;
	const struct region_count *top[REGIONS_SHOWN];
	size_t n = regions_top(r, vm->pid, vm->index, top, REGIONS_SHOWN);
	__u64 total = regions_vm_total(r, vm->pid, vm->index);
	char size[24];

	if (!r->size)
		return;
	fprintf(f, "    hot regions (%s each, since the start; %llu faults in all):\n",
		size_name(r->size, size), (unsigned long long)total);
	for (size_t i = 0; i < n; i++) {
		const struct region_count *c = top[i];
		char slot[16], range[48];

		snprintf(slot, sizeof(slot), c->slot < 0 ? "-" : "%d", c->slot);
		snprintf(range, sizeof(range), "[0x%llx, 0x%llx)", (unsigned long long)c->base,
			 (unsigned long long)(c->base + r->size));
		fprintf(f, "      memslot %-4s %-34s %12llu %6.1f%%\n", slot, range,
			(unsigned long long)c->faults,
			total ? 100.0 * (double)c->faults / (double)total : 0.0);
	}
	if (!n)
		fprintf(f, "      none\n");
}

void render_storm(FILE *f, const struct timeline_event *t, __u64 size)
{
	__u64 shown = 0;

	for (unsigned int i = 0; i < t->n_storm; i++) {
		const struct storm_region *r = &t->storm[i];
		char slot[16];

		snprintf(slot, sizeof(slot), r->slot < 0 ? "-" : "%d", r->slot);
		fprintf(f, "%s memslot %s [0x%llx, 0x%llx) %llu", i ? "," : "                 in",
			slot, (unsigned long long)r->base, (unsigned long long)(r->base + size),
			(unsigned long long)r->faults);
		shown += r->faults;
	}
	if (t->storm_faults > shown)
		fprintf(f, ", %llu in other regions",
			(unsigned long long)(t->storm_faults - shown));
	fputc('\n', f);
}

int render_csv_regions(struct csv_writer *w, const struct snapshot *snap, struct csv_row *row,
		       const struct vm_row *vm)
{
	const struct regions *r = &snap->regions;
	int err = 0;

	for (size_t i = 0; i < r->n && !err; i++) {
		const struct region_count *c = &r->items[i];
		char base[24], metric[40];

		if (c->pid != vm->pid || c->vm_index != vm->index)
			continue;
		/* le: the region's first GPA (decimal), as a bound is written */
		snprintf(base, sizeof(base), "%llu", (unsigned long long)c->base);
		if (c->slot < 0)
			snprintf(metric, sizeof(metric), "region_faults_fast_path");
		else
			snprintf(metric, sizeof(metric), "region_faults_slot_%d", c->slot);
		row->metric = metric;
		row->le = base;
		row->kind = CSV_U64;
		row->u64 = c->faults;
		err = csv_write_row(w, row);
	}
	row->le = NULL;
	return err;
}
