// SPDX-License-Identifier: GPL-2.0
/* The faults' kinds as families: access kinds, entries, mapping levels, why not huge. */
#include <stddef.h>

#include "render_prom.h"

/*
 * Faults by access kind and by whether the entry was present (two families:
 * each sums to the faults, so one family with both would count them twice);
 * by mapping level requested and installed; why not huge.
 */
void render_prom_fault_kinds(struct prom_writer *w, const struct snapshot *s, const char *const *vm)
{
	static const struct {
		int counter;
		const char *label;
	} access[] = {{KVMMMU_ACCESS_READ, "read"},
		      {KVMMMU_ACCESS_WRITE, "write"},
		      {KVMMMU_ACCESS_FETCH, "fetch"},
		      {KVMMMU_ACCESS_UNKNOWN, "unknown"}},
	  entry[] = {{KVMMMU_ACCESS_NOT_PRESENT, "not_present"},
		     {KVMMMU_ACCESS_PRESENT, "present"},
		     {KVMMMU_ACCESS_UNKNOWN, "unknown"}},
	  not_huge[] = {{KVMMMU_LEVEL_NOT_HUGE_DIRTY_LOG, "dirty_log"},
			{KVMMMU_LEVEL_NOT_HUGE_HOST, "host"},
			{KVMMMU_LEVEL_NOT_HUGE_NX, "nx"},
			{KVMMMU_LEVEL_NOT_HUGE_GMEM, "gmem"}};

	if (s->counter_absent[KVMMMU_ACCESS_READ] || s->counter_absent[KVMMMU_LEVEL_REQUESTED_4K])
		return;
	prom_family(w, "kvmmmu_page_fault_accesses_total", PROM_COUNTER,
		    "KVM MMU page faults by access: read, write or instruction fetch (from the "
		    "error code)");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (size_t a = 0; a < sizeof(access) / sizeof(access[0]); a++) {
			struct prom_label l[] = {{"vm", vm[i]}, {"access", access[a].label}};

			prom_u64(w, l, 2, s->m.vms[i].total.counters[access[a].counter]);
		}
	prom_family(w, "kvmmmu_page_fault_entries_total", PROM_COUNTER,
		    "KVM MMU page faults by the faulting entry: not present, or present (a "
		    "protection fault: a write to a write-protected page, a fetch from an NX one)");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (size_t e = 0; e < sizeof(entry) / sizeof(entry[0]); e++) {
			struct prom_label l[] = {{"vm", vm[i]}, {"entry", entry[e].label}};

			prom_u64(w, l, 2, s->m.vms[i].total.counters[entry[e].counter]);
		}
	/* requested and installed: two families, as a sum over one would count faults twice */
	for (int stage = 0; stage < 2; stage++) {
		static const char *const levels[] = {"4k", "2m", "1g"};
		int first = stage ? KVMMMU_LEVEL_INSTALLED_4K : KVMMMU_LEVEL_REQUESTED_4K;

		prom_family(w,
			    stage ? "kvmmmu_page_fault_levels_installed_total"
				  : "kvmmmu_page_fault_levels_requested_total",
			    PROM_COUNTER,
			    stage ? "KVM MMU page faults by the level their SPTE was set at"
				  : "KVM MMU page faults that requested an SPTE, by the level "
				    "requested (fault->goal_level)");
		for (size_t i = 0; i < s->m.n_vms; i++)
			for (int lv = 0; lv < 3; lv++) {
				struct prom_label l[] = {{"vm", vm[i]}, {"level", levels[lv]}};

				prom_u64(w, l, 2, s->m.vms[i].total.counters[first + lv]);
			}
	}
	prom_family(
		w, "kvmmmu_page_faults_not_huge_total", PROM_COUNTER,
		"KVM MMU page faults mapped 4 KiB where the guest's mapping allowed a huge page, "
		"by why: dirty_log, host (the host's mapping or the memslot's alignment), nx "
		"(NX huge pages), gmem (guest_memfd gives the page, and its level)");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (size_t r = 0; r < sizeof(not_huge) / sizeof(not_huge[0]); r++) {
			struct prom_label l[] = {{"vm", vm[i]}, {"reason", not_huge[r].label}};

			/* a run from before the reason: no sample, not a 0 */
			if (s->counter_absent[not_huge[r].counter])
				continue;

			prom_u64(w, l, 2, s->m.vms[i].total.counters[not_huge[r].counter]);
		}
}
