// SPDX-License-Identifier: GPL-2.0
/*
 * The catalogue of figures (kvmmmu_metrics.h) as tables by enum value: the
 * only place its lines are expanded for user space. A unit test may define
 * these tables itself, to try a face with a catalogue of its own.
 */
#include <stddef.h>

#include "catalogue.h"

#define COUNTER_NAME(id, name, prom, show, help) [KVMMMU_##id] = name,
const char *const kvmmmu_counter_names[KVMMMU_N_COUNTERS] = {KVMMMU_COUNTERS(COUNTER_NAME)};
#define COUNTER_SHOW(id, name, prom, show, help) [KVMMMU_##id] = show,
const unsigned int kvmmmu_counter_show[KVMMMU_N_COUNTERS] = {KVMMMU_COUNTERS(COUNTER_SHOW)};
#define COUNTER_PROM(id, name, prom, show, help) [KVMMMU_##id] = prom,
const char *const kvmmmu_counter_prom[KVMMMU_N_COUNTERS] = {KVMMMU_COUNTERS(COUNTER_PROM)};
#define COUNTER_HELP(id, name, prom, show, help) [KVMMMU_##id] = help,
const char *const kvmmmu_counter_help[KVMMMU_N_COUNTERS] = {KVMMMU_COUNTERS(COUNTER_HELP)};

#define HIST_NAME(id, name, words, help) [KVMMMU_HIST_##id] = name,
const char *const kvmmmu_hist_names[KVMMMU_N_HISTS] = {KVMMMU_HISTS(HIST_NAME)};
#define HIST_WORDS(id, name, words, help) [KVMMMU_HIST_##id] = words,
const char *const kvmmmu_hist_words[KVMMMU_N_HISTS] = {KVMMMU_HISTS(HIST_WORDS)};
#define HIST_HELP(id, name, words, help) [KVMMMU_HIST_##id] = help,
const char *const kvmmmu_hist_help[KVMMMU_N_HISTS] = {KVMMMU_HISTS(HIST_HELP)};

#define MMU_NAME(id, name, prom, help) [KVMMMU_##id] = name,
const char *const kvmmmu_mmu_counter_names[KVMMMU_N_MMU_COUNTERS] = {KVMMMU_MMU_COUNTERS(MMU_NAME)};
#define MMU_PROM(id, name, prom, help) [KVMMMU_##id] = prom,
const char *const kvmmmu_mmu_counter_prom[KVMMMU_N_MMU_COUNTERS] = {KVMMMU_MMU_COUNTERS(MMU_PROM)};
#define MMU_HELP(id, name, prom, help) [KVMMMU_##id] = help,
const char *const kvmmmu_mmu_counter_help[KVMMMU_N_MMU_COUNTERS] = {KVMMMU_MMU_COUNTERS(MMU_HELP)};
