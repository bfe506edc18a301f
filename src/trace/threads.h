/* SPDX-License-Identifier: GPL-2.0 */
/* The collector's thread bookkeeping (threads.c), for collector.c. */
#ifndef KVMMMU_THREADS_H
#define KVMMMU_THREADS_H

#include "collector.h"

/* Opens the thread-news ring of the loaded faults object: first sightings and exits. */
int collector_open_news(struct collector *c);
/* Frees what threads.c keeps: the ring, the names, exited threads' figures, the /proc map. */
void collector_free_threads(struct collector *c);

#endif
