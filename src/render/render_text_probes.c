// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-hist's opening lines: the probes attached and how the outcomes and
 * latencies are had, then what could not be attached and what cannot be shown.
 */
#include <stdlib.h>
#include <string.h>

#include "render.h"

/* the Probes: block's width: continuation lines are indented by PROBES_INDENT */
#define PROBES_WIDTH 100
#define PROBES_INDENT "        "

/*
 * "Probes: a (tp_btf), b (tp_btf), ..." wrapped at PROBES_WIDTH columns, each
 * further line indented: some twenty tracepoints made one line of 900.
 */
static void print_attached(FILE *f, const struct probe_status *probes, size_t n)
{
	size_t col = strlen("Probes:");
	bool first = true;

	fprintf(f, "Probes:");
	for (size_t i = 0; i < n; i++) {
		const struct probe_status *p = &probes[i];
		char item[160];
		int len;

		if (p->kind == ATTACH_NONE)
			continue;
		len = snprintf(item, sizeof(item), "%s%s%s (%s)", p->group ? p->group : "",
			       p->group ? ":" : "", p->name, attach_kind_str(p->kind));
		if (len < 0)
			continue;
		if (!first && col + 2 + (size_t)len > PROBES_WIDTH) {
			fprintf(f, ",\n%s", PROBES_INDENT);
			col = strlen(PROBES_INDENT);
		} else {
			fputs(first ? " " : ", ", f);
			col += first ? 1 : 2;
		}
		fputs(item, f);
		col += (size_t)len;
		first = false;
	}
	fputc('\n', f);
}

void render_probe_header(FILE *f, const struct snapshot *snap)
{
	print_attached(f, snap->probes, snap->n_probes);
	fprintf(f, "Outcomes from: %s; RET_PF_* from %s\n",
		snap->func_mode	   ? "function return values"
		: snap->done_event ? "the kvm_mmu_page_fault_done tracepoint (kernel-patches/)"
				   : "tracepoints (SPTE requested -> set = fixed, none = spurious)",
		snap->ret_pf.source == RET_PF_FROM_BTF ? "BTF" : "the tracefs format");
	if (snap->sample_every > 1)
		fprintf(f,
			"Latency: sampled, 1 fault in %u timed, at random (histograms and "
			"mmu_lock waits are of timed faults; counts and outcomes of every fault)\n",
			snap->sample_every);
}

/* Probes that could not be had, one line per reason, naming each probe once. */
static void print_unavailable(FILE *f, const struct probe_status *const *p, size_t n)
{
	bool *done = calloc(n ? n : 1, sizeof(*done));

	for (size_t i = 0; done && i < n; i++) {
		const char *sep = "";

		if (done[i])
			continue;
		fprintf(f, "Unavailable:");
		for (size_t k = i; k < n; k++) {
			if (done[k] || strcmp(p[k]->why, p[i]->why))
				continue;
			fprintf(f, "%s %s%s%s", sep, p[k]->group ? p[k]->group : "",
				p[k]->group ? ":" : "", p[k]->name);
			sep = ",";
			done[k] = true;
		}
		fprintf(f, " (%s)\n", p[i]->why);
	}
	free(done);
}

void render_unavailable(FILE *f, const struct snapshot *snap, const struct render_opts *o)
{
	const struct probe_status **missing = calloc(snap->n_probes + 1, sizeof(*missing));
	size_t n = 0;
	const char *sep = "";

	if (!missing)
		return;
	for (size_t i = 0; i < snap->n_probes; i++) {
		const struct probe_status *p = &snap->probes[i];

		/* the collector's tracepoints are all there or it failed; functions may not be */
		if (p->kind == ATTACH_NONE &&
		    (i >= snap->n_collector_probes || (p->wanted && !p->group)))
			missing[n++] = p;
	}
	print_unavailable(f, missing, n);
	free(missing);
	for (int h = 0; h < KVMMMU_N_HISTS; h++) {
		if (!o->show[SECTION_HIST0 + h] || snap->hist_available[h])
			continue;
		fprintf(f, "%s %s", *sep ? "," : "Cannot show:", kvmmmu_hist_names[h]);
		sep = ",";
	}
	if (o->show[SECTION_MEMSLOT] && !snap->hist_available[KVMMMU_HIST_MEMSLOT]) {
		fprintf(f, "%s memslot lookups per fault", *sep ? "," : "Cannot show:");
		sep = ",";
	}
	if (*sep)
		fprintf(f, " (they need the probes above)\n");
}
