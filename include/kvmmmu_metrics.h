/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The catalogue of kvmmmu's per-thread figures: one line per figure, from
 * which the enums BPF counts into, the names CSV and the text report use,
 * the Prometheus families of plain counters, kvmmmu-diff's rows, the help
 * texts and docs/csv.md's table (make docs) all come. Adding a per-fault
 * counter is a line in KVMMMU_COUNTERS, the BPF code that counts it, and a
 * test (docs/architecture.md shows one).
 *
 * Append new figures at the end of a list: the enums size BPF maps, and a
 * CSV reader finds figures by name, never by position.
 */
#ifndef KVMMMU_METRICS_H
#define KVMMMU_METRICS_H

/* Where a per-fault counter shows, besides CSV (every counter is written there). */
#define KVMMMU_SHOW_EVENTS 0x1 /* the text report's "events:" line, when not 0 */
#define KVMMMU_SHOW_PROM 0x2   /* a Prometheus counter family per VM, PROM its name */
#define KVMMMU_SHOW_DIFF 0x4   /* kvmmmu-diff: a "NAME per fault" row per VM */

/*
 * Per-fault counters: X(ID, NAME, PROM, SHOW, HELP). ID makes KVMMMU_<ID>;
 * NAME is the CSV metric and the text report's word; PROM a family name or
 * NULL (faults, paths and memslot lookups have families with labels of
 * their own, in render_prom.c); SHOW the faces above.
 */
#define KVMMMU_COUNTERS(X)                                                                         \
	X(FAULTS, "faults", NULL, 0, "faults handled, what KVM counts as pf_taken")                \
	X(PATH_FAST, "path_fast", NULL, 0, "faults resolved by fast_page_fault, without mmu_lock") \
	X(PATH_TDP_MMU, "path_tdp_mmu", NULL, 0, "faults resolved by the TDP MMU")                 \
	X(PATH_SHADOW, "path_shadow", NULL, 0,                                                     \
	  "faults resolved by shadow paging (FNAME(page_fault))")                                  \
	X(PATH_DIRECT, "path_direct", NULL, 0,                                                     \
	  "faults resolved by the legacy direct MMU (tdp_mmu=N)")                                  \
	X(MEMSLOT_LOOKUPS, "memslot_lookups", NULL, 0,                                             \
	  "kvm_vcpu_gfn_to_memslot calls of the faults KVM counts, from kvm_mmu_page_fault to "    \
	  "its handler's return")                                                                  \
	X(MEMSLOT_OTHER, "memslot_lookups_outside_faults", NULL, 0,                                \
	  "the other kvm_vcpu_gfn_to_memslot calls: the emulation of MMIO exits and of faults "    \
	  "that return EMULATE, ioctls (function probes only)")                                    \
	X(GUEST_WALKS, "guest_walks", NULL, KVMMMU_SHOW_EVENTS,                                    \
	  "guest page-table walks (kvm_mmu_pagetable_walk)")                                       \
	X(WALKER_ERRORS, "walker_errors", NULL, KVMMMU_SHOW_EVENTS,                                \
	  "walks that ended in a #PF for the guest (kvm_mmu_walker_error)")                        \
	X(SPTE_REQUESTED, "spte_requested", NULL, KVMMMU_SHOW_EVENTS,                              \
	  "SPTEs requested for a fault (kvm_mmu_spte_requested)")                                  \
	X(SPTES_SET, "sptes_set", NULL, KVMMMU_SHOW_EVENTS, "SPTEs set (kvm_mmu_set_spte)")        \
	X(SPTES_PREFETCHED, "sptes_prefetched", NULL, KVMMMU_SHOW_EVENTS,                          \
	  "SPTEs set after the faulting one (kvm_mmu_set_spte, prefetch)")                         \
	X(FAST_PF_CALLS, "fast_page_fault_calls", NULL, KVMMMU_SHOW_EVENTS,                        \
	  "fast-path attempts (kvmmmu:fast_page_fault)")                                           \
	X(TDP_SPTE_CHANGES, "tdp_mmu_spte_changes", NULL, KVMMMU_SHOW_EVENTS,                      \
	  "TDP MMU SPTE changes (kvm_tdp_mmu_spte_changed)")                                       \
	X(MMIO_FAULTS, "mmio_faults", NULL, KVMMMU_SHOW_EVENTS,                                    \
	  "faults on an MMIO SPTE (handle_mmio_page_fault)")                                       \
	X(MMIO_SPTES_CREATED, "mmio_sptes_created", NULL, KVMMMU_SHOW_EVENTS,                      \
	  "MMIO SPTEs made (mark_mmio_spte)")                                                      \
	X(PF_EXITS, "page_fault_exits", NULL, KVMMMU_SHOW_EVENTS,                                  \
	  "#PF, NPF and EPT-violation exits (kvm:kvm_page_fault)")                                 \
	X(ACCESS_READ, "access_read", NULL, 0, "faults on a read")                                 \
	X(ACCESS_WRITE, "access_write", NULL, 0, "faults on a write")                              \
	X(ACCESS_FETCH, "access_fetch", NULL, 0, "faults on an instruction fetch")                 \
	X(ACCESS_NOT_PRESENT, "access_not_present", NULL, 0,                                       \
	  "faults where no entry mapped the address")                                              \
	X(ACCESS_PRESENT, "access_present", NULL, 0,                                               \
	  "protection faults: the entry was present but did not allow the access (a write to a "   \
	  "read-only page, a fetch from an NX one)")                                               \
	X(ACCESS_UNKNOWN, "access_unknown", NULL, 0,                                               \
	  "faults whose access kind was not seen (in neither the read/write/fetch nor the "        \
	  "present counts)")                                                                       \
	X(LEVEL_REQUESTED_4K, "level_requested_4k", NULL, 0,                                       \
	  "faults that requested a 4 KiB SPTE (fault->goal_level)")                                \
	X(LEVEL_REQUESTED_2M, "level_requested_2m", NULL, 0, "faults that requested a 2 MiB SPTE") \
	X(LEVEL_REQUESTED_1G, "level_requested_1g", NULL, 0, "faults that requested a 1 GiB SPTE") \
	X(LEVEL_INSTALLED_4K, "level_installed_4k", NULL, 0,                                       \
	  "faults whose SPTE was set at 4 KiB (kvm_mmu_set_spte)")                                 \
	X(LEVEL_INSTALLED_2M, "level_installed_2m", NULL, 0, "faults whose SPTE was set at 2 MiB") \
	X(LEVEL_INSTALLED_1G, "level_installed_1g", NULL, 0, "faults whose SPTE was set at 1 GiB") \
	X(LEVEL_NOT_HUGE_DIRTY_LOG, "level_not_huge_dirty_log", NULL, 0,                           \
	  "4 KiB requests the guest's mapping allowed huge: the memslot is dirty-logged")          \
	X(LEVEL_NOT_HUGE_HOST, "level_not_huge_host", NULL, 0,                                     \
	  "4 KiB requests the guest's mapping allowed huge: the host maps the page at 4 KiB, or "  \
	  "the memslot's alignment allows no more (kvm_mmu_max_mapping_level)")                    \
	X(LEVEL_NOT_HUGE_NX, "level_not_huge_nx", NULL, 0,                                         \
	  "4 KiB requests the guest's mapping allowed huge: an instruction fetch under NX huge "   \
	  "pages (the iTLB multihit mitigation)")                                                  \
	X(LEVEL_NOT_HUGE_GMEM, "level_not_huge_gmem", NULL, 0,                                     \
	  "4 KiB requests whose page guest_memfd gives, which then decides the level (its "        \
	  "folios are 4 KiB): private faults (6.12 on), faults on a memslot of guest_memfd alone " \
	  "(7.2, 7.3: kvmmmu-load --gmem); 6.1 has no guest_memfd")

/*
 * Latency histograms: X(ID, NAME, WORDS, HELP). ID makes KVMMMU_HIST_<ID>;
 * NAME is the CSV metric and the --metric word; WORDS how kvmmmu-check
 * names it (NULL: off unless asked for, not checked).
 */
#define KVMMMU_HISTS(X)                                                                            \
	X(FAULT, "fault_ns", "fault", "kvm_mmu_page_fault entry to exit")                          \
	X(FAST, "fast_path_ns", "fast-path",                                                       \
	  "kvm_mmu_page_fault entry to the end of the fast path that fixed the fault (fixed or "   \
	  "spurious: the fast_page_fault tracepoint, or its handler's return)")                    \
	X(SLOW, "slow_path_ns", "slow-path",                                                       \
	  "kvm_mmu_page_fault entry to its page-fault handler's return, when the fast path did "   \
	  "not fix the fault")                                                                     \
	X(PHASE_WALK, "phase_walk_ns", NULL,                                                       \
	  "a fault's phase: its guest page-table walk (shadow paging; FNAME(walk_addr_generic), "  \
	  "or kvm_mmu_pagetable_walk to its last kvm_mmu_paging_element)")                         \
	X(MEMSLOT, "memslot_ns", "memslot", "one kvm_vcpu_gfn_to_memslot call inside a fault")     \
	X(WALK_TO_SPTE, "walk_to_spte_ns", "walk-to-spte",                                         \
	  "kvm_mmu_pagetable_walk to the fault's kvm_mmu_set_spte")                                \
	X(PHASE_PFN, "phase_pfn_ns", NULL,                                                         \
	  "a fault's phase: resolving the host page (kvm_faultin_pfn: GUP, swap-in, an "           \
	  "async page fault's setup, a userfaultfd wait)")                                         \
	X(PHASE_LOCK, "phase_lock_ns", NULL,                                                       \
	  "a fault's phase: its waits for mmu_lock, summed (faults that waited)")                  \
	X(PHASE_MAP, "phase_map_ns", NULL,                                                         \
	  "a fault's phase: mapping, kvm_mmu_spte_requested to the fault's kvm_mmu_set_spte")      \
	X(PHASE_OTHER, "phase_other_ns", NULL,                                                     \
	  "a fault's phase: the rest of its time, what no other phase measured")

/*
 * MMU lifecycle and ioctl counters: X(ID, NAME, PROM, HELP). ID makes
 * KVMMMU_<ID>; PROM its Prometheus family (NULL: the dirty-log families,
 * which have a direction label, in render_prom.c).
 */
#define KVMMMU_MMU_COUNTERS(X)                                                                     \
	X(SHADOW_PAGES_CREATED, "shadow_pages_created", "kvmmmu_shadow_pages_created_total",       \
	  "Shadow pages created (kvm_mmu_get_page)")                                               \
	X(SHADOW_PAGES_REUSED, "shadow_pages_reused", "kvmmmu_shadow_pages_reused_total",          \
	  "Shadow pages found in the hash and reused")                                             \
	X(SHADOW_PAGES_ZAPPED, "shadow_pages_zapped", "kvmmmu_shadow_pages_zapped_total",          \
	  "Shadow pages zapped (kvm_mmu_prepare_zap_page)")                                        \
	X(SHADOW_PAGES_SYNCED, "shadow_pages_synced", "kvmmmu_shadow_pages_synced_total",          \
	  "Unsync shadow pages synced")                                                            \
	X(SHADOW_PAGES_UNSYNCED, "shadow_pages_unsynced", "kvmmmu_shadow_pages_unsynced_total",    \
	  "Shadow pages marked unsync")                                                            \
	X(HUGE_PAGE_SPLITS, "huge_page_splits", "kvmmmu_huge_page_splits_total",                   \
	  "Huge pages split (kvm_mmu_split_huge_page)")                                            \
	X(ZAP_ALL_FAST, "zap_all_fast", "kvmmmu_zap_all_fast_total",                               \
	  "Fast zaps of every shadow page (kvm_mmu_zap_all_fast)")                                 \
	X(MEMSLOT_UPDATES, "memslot_updates", "kvmmmu_memslot_updates_total",                      \
	  "KVM_SET_USER_MEMORY_REGION(2) calls")                                                   \
	X(DIRTY_LOG_ENABLES, "dirty_log_enables", NULL,                                            \
	  "memslot updates that turned dirty logging on")                                          \
	X(DIRTY_LOG_DISABLES, "dirty_log_disables", NULL,                                          \
	  "memslot updates that turned dirty logging off")                                         \
	X(DIRTY_LOG_GETS, "dirty_log_gets", NULL, "KVM_GET_DIRTY_LOG calls")                       \
	X(DIRTY_LOG_CLEARS, "dirty_log_clears", NULL, "KVM_CLEAR_DIRTY_LOG calls")                 \
	X(ROOT_LOADS, "root_loads", "kvmmmu_mmu_root_loads_total",                                 \
	  "MMU roots (re)loaded (kvm_mmu_load)")                                                   \
	X(ROOT_UNLOADS, "root_unloads", "kvmmmu_mmu_root_unloads_total",                           \
	  "MMU unloads: every root of a vCPU MMU freed at once (kvm_mmu_free_roots)")

#endif
