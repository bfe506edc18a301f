// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-hist --slower: one line per fault that took at least that long, as
 * bcc's ext4slower prints its slow operations, and the same as CSV rows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <time.h>

#include "render.h"

static const char *const level_names[] = {"-", "4k", "2m", "1g"};

static const char *level_name(__u8 level)
{
	return level < sizeof(level_names) / sizeof(level_names[0]) ? level_names[level] : "?";
}

/* "write" or "write,prot": the access, and whether the entry was present; "-": not known. */
static const char *access_name(__u8 a, char buf[16])
{
	if (!(a & KVMMMU_ACC_KNOWN))
		return "-";
	snprintf(buf, 16, "%s%s",
		 a & KVMMMU_ACC_FETCH	? "fetch"
		 : a & KVMMMU_ACC_WRITE ? "write"
					: "read",
		 a & KVMMMU_ACC_PRESENT ? ",prot" : "");
	return buf;
}

static const char *outcome_name(const struct ret_pf_table *names, __s32 ret)
{
	if (ret < 0)
		return "error";
	return ret < KVMMMU_RET_PF_SLOTS && names->name[ret] ? names->name[ret] : "?";
}

void render_slow_header(FILE *f, const struct snapshot *facts, __u64 slower_ns)
{
	fprintf(f, "Faults of %.3f ms or more%s%s; times in ms, a phase '-' where not measured:\n",
		(double)slower_ns / 1e6,
		facts->sample_every > 1 ? " (of the timed ones: --sample)" : "",
		facts->func_mode
			? ""
			: " (tracepoints: shadow paging's faults only, from the walk to the "
			  "SPTE)");
	fprintf(f, "%-12s %-16s %7s %4s %-18s %-18s %-10s %-5s %-7s %-15s %9s", "TIME", "VM", "PID",
		"VCPU", "GPA", "GVA", "ACCESS", "LEVEL", "PATH", "OUTCOME", "LAT");
	for (int p = 0; p < KVMMMU_N_PHASES; p++)
		fprintf(f, " %8s", kvmmmu_phase_names[p]);
	fputc('\n', f);
}

/*
 * --stack: under a slow fault's line, its time off the CPU and the kernel
 * stack of its longest wait there, innermost frame first, as perf and
 * bpftrace print stacks.
 */
static void render_slow_stack(FILE *f, const struct slow_fault *s)
{
	const struct kvmmmu_slow_fault *r = &s->rec;
	const char *frame = s->stack;

	if (!r->offcpu_ns) {
		fprintf(f, "    off the CPU: never (its time was spent running)\n");
		return;
	}
	fprintf(f, "    off the CPU %.3f ms, the longest wait %.3f ms, in:\n",
		(double)r->offcpu_ns / 1e6, (double)r->offcpu_max_ns / 1e6);
	if (!frame) {
		/* no room for the thread, bpf_get_stack()'s or the copy's error, or nothing here */
		fprintf(f, "        (its stack was not kept: %s)\n",
			r->stack_len == -ENOENT ? "no room for its thread's stacks"
			: r->stack_len < 0	? strerror(-r->stack_len)
			: r->stack_len == 0	? "the kernel gave no frames"
						: "its frames could not be named");
		return;
	}
	while (*frame) {
		size_t len = strcspn(frame, ";");

		fprintf(f, "        %.*s\n", (int)len, frame);
		frame += len + (frame[len] == ';');
	}
}

/*
 * A traced command shares our stdout (kvmmmu-hist -- CMD >file), so a write
 * of ours that ends inside a line lets its output into the middle of one of
 * ours: flush before a record the buffer may not hold whole, and every write
 * ends at a record's end.
 */
static void slow_record_fits(FILE *f, const struct slow_fault *s)
{
	/* its line (under 256 bytes), then --stack's: two, and 9 bytes more a frame */
	size_t most = 512 + (s->stack ? strlen(s->stack) + 9 * (KVMMMU_STACK_DEPTH + 1) : 0);
	size_t size = __fbufsize(f);

	if (size > most && size - __fpending(f) < most)
		fflush(f);
}

/* FACTS: how this run measures (which phases it has, the RET_PF_* names). */
void render_slow(FILE *f, const struct slow_faults *l, const struct snapshot *facts)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct slow_fault *s = &l->items[i];
		const struct kvmmmu_slow_fault *r = &s->rec;
		char when[16], gpa[24], gva[24], vm[80], acc[16], level[8];
		time_t secs = (time_t)s->wall;
		struct tm tm;

		slow_record_fits(f, s);
		strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&secs, &tm));
		snprintf(gpa, sizeof(gpa), r->gpa == ~0ULL ? "-" : "0x%llx",
			 (unsigned long long)r->gpa);
		snprintf(gva, sizeof(gva), r->gva == ~0ULL ? "-" : "0x%llx",
			 (unsigned long long)r->gva);
		snprintf(vm, sizeof(vm), s->vm_index > 1 ? "%s #%d" : "%s", s->vm, s->vm_index);
		snprintf(level, sizeof(level), "%s/%s", level_name(r->level_requested),
			 level_name(r->level_installed));
		fprintf(f, "%s.%03d %-16s %7u %4d %-18s %-18s %-10s %-5s %-7s %-15s %9.3f", when,
			(int)((s->wall - (double)secs) * 1000), vm, r->tgid, r->vcpu_id, gpa, gva,
			access_name(r->access, acc), level,
			r->path < KVMMMU_N_FAULT_PATHS ? kvmmmu_fault_path_names[r->path] : "?",
			outcome_name(&facts->ret_pf, r->ret), (double)r->ns / 1e6);
		for (int p = 0; p < KVMMMU_N_PHASES; p++) {
			if (facts->hist_available[kvmmmu_phase_hist[p]])
				fprintf(f, " %8.3f", (double)r->phase_ns[p] / 1e6);
			else
				fprintf(f, " %8s", "-");
		}
		fputc('\n', f);
		if (facts->slow_stacks)
			render_slow_stack(f, s);
	}
	if (l->dropped)
		fprintf(f, "WARNING: %llu slow faults not kept (too many waiting)\n",
			(unsigned long long)l->dropped);
}

/*
 * --stack: slow_fault_offcpu_ns and _offcpu_max_ns, then one
 * slow_fault_stack row per frame of the longest wait, the frame in the le
 * column and its depth as the value (0: innermost). ROW: the record's.
 */
static int csv_slow_stack(struct csv_writer *w, struct csv_row *row, const struct slow_fault *s)
{
	const char *frame = s->stack;
	char buf[256];
	int err, depth = 0;

	row->metric = "slow_fault_offcpu_ns";
	row->u64 = s->rec.offcpu_ns;
	err = csv_write_row(w, row);
	row->metric = "slow_fault_offcpu_max_ns";
	row->u64 = s->rec.offcpu_max_ns;
	if (!err)
		err = csv_write_row(w, row);
	row->metric = "slow_fault_stack";
	while (!err && frame && *frame) {
		size_t len = strcspn(frame, ";");

		snprintf(buf, sizeof(buf), "%.*s", (int)len, frame);
		row->le = buf;
		row->u64 = (__u64)depth++;
		err = csv_write_row(w, row);
		frame += len + (frame[len] == ';');
	}
	row->le = NULL;
	return err;
}

int render_csv_slow(struct csv_writer *w, const struct slow_faults *l, const struct snapshot *facts)
{
	int err = 0;

	for (size_t i = 0; i < l->n && !err; i++) {
		const struct slow_fault *s = &l->items[i];
		const struct kvmmmu_slow_fault *r = &s->rec;
		char acc[40], outcome[64], metric[64], comm[sizeof(r->process) + 1] = {};
		struct csv_row row = {.ts = s->wall,
				      .pid = (int)r->tgid,
				      .comm = memcpy(comm, r->process, sizeof(r->process)),
				      .vcpu = r->vcpu_id,
				      .source = "slow",
				      .vm = s->vm,
				      .vm_index = s->vm_index,
				      .kind = CSV_U64};
		struct {
			const char *metric;
			__u64 value;
			bool have;
		} cols[] = {
			{"slow_fault_ns", r->ns, true},
			{"slow_fault_gpa", r->gpa, r->gpa != ~0ULL},
			{"slow_fault_gva", r->gva, r->gva != ~0ULL},
			{"slow_fault_level_requested", r->level_requested, r->level_requested != 0},
			{"slow_fault_level_installed", r->level_installed, r->level_installed != 0},
			{NULL, 1, true}, /* its access kind */
			{"slow_fault_present", (r->access & KVMMMU_ACC_PRESENT) != 0,
			 (r->access & KVMMMU_ACC_KNOWN) != 0},
			{NULL, 1,
			 true}, /* its path and outcome, as the outcome_PATH_RET counters */
		};

		snprintf(acc, sizeof(acc), "slow_fault_access_%s",
			 !(r->access & KVMMMU_ACC_KNOWN) ? "unknown"
			 : r->access & KVMMMU_ACC_FETCH	 ? "fetch"
			 : r->access & KVMMMU_ACC_WRITE	 ? "write"
							 : "read");
		snprintf(outcome, sizeof(outcome), "slow_fault_outcome_%s_%s",
			 r->path < KVMMMU_N_FAULT_PATHS ? kvmmmu_fault_path_names[r->path]
							: "unknown",
			 outcome_name(&facts->ret_pf, r->ret));
		cols[5].metric = acc;
		cols[7].metric = outcome;
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]) && !err; c++) {
			if (!cols[c].have)
				continue;
			row.metric = cols[c].metric;
			row.u64 = cols[c].value;
			err = csv_write_row(w, &row);
		}
		for (int p = 0; p < KVMMMU_N_PHASES && !err; p++) {
			if (!facts->hist_available[kvmmmu_phase_hist[p]])
				continue;
			/* phase_walk_ns, ...: the catalogue's name of the phase's histogram */
			snprintf(metric, sizeof(metric), "slow_fault_%s",
				 kvmmmu_hist_names[kvmmmu_phase_hist[p]]);
			row.metric = metric;
			row.u64 = r->phase_ns[p];
			err = csv_write_row(w, &row);
		}
		if (facts->slow_stacks && !err)
			err = csv_slow_stack(w, &row, s);
	}
	return err;
}
