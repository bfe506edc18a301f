// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-hist --slower: one line per fault that took at least that long, as
 * bcc's ext4slower prints its slow operations, and the same as CSV rows.
 */
#include <stdio.h>
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

/* FACTS: how this run measures (which phases it has, the RET_PF_* names). */
void render_slow(FILE *f, const struct slow_faults *l, const struct snapshot *facts)
{

	for (size_t i = 0; i < l->n; i++) {
		const struct slow_fault *s = &l->items[i];
		const struct kvmmmu_slow_fault *r = &s->rec;
		char when[16], gpa[24], gva[24], vm[80], acc[16], level[8];
		time_t secs = (time_t)s->wall;
		struct tm tm;

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
	}
	if (l->dropped)
		fprintf(f, "WARNING: %llu slow faults not kept (too many waiting)\n",
			(unsigned long long)l->dropped);
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
	}
	return err;
}
