/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The catalogue of kvmmmu's figures (include/kvmmmu_metrics.h) as tables
 * indexed by their enums: names, where each shows, Prometheus families and
 * help texts. Every face takes them from here.
 */
#ifndef KVMMMU_CATALOGUE_H
#define KVMMMU_CATALOGUE_H

#include <linux/types.h>

#include "kvmmmu.h"

extern const char *const kvmmmu_counter_names[KVMMMU_N_COUNTERS];
extern const unsigned int kvmmmu_counter_show[KVMMMU_N_COUNTERS]; /* KVMMMU_SHOW_* */
extern const char *const kvmmmu_counter_prom[KVMMMU_N_COUNTERS];  /* NULL: no family of its own */
extern const char *const kvmmmu_counter_help[KVMMMU_N_COUNTERS];
extern const char *const kvmmmu_hist_names[KVMMMU_N_HISTS];
extern const char *const kvmmmu_hist_words[KVMMMU_N_HISTS]; /* kvmmmu-check's; NULL: not checked */
extern const char *const kvmmmu_hist_help[KVMMMU_N_HISTS];
extern const char *const kvmmmu_mmu_counter_names[KVMMMU_N_MMU_COUNTERS];
extern const char *const kvmmmu_mmu_counter_prom[KVMMMU_N_MMU_COUNTERS];
extern const char *const kvmmmu_mmu_counter_help[KVMMMU_N_MMU_COUNTERS];

#endif
