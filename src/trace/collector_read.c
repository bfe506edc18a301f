// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the faults object's per-thread figures (and those of exited
 * threads) into the model, each thread placed on its vCPU's row.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "mmu_extras.h"
#include "settle.h"
#include "faults.skel.h"

struct vm_row *collector_model_vm(struct collector *c, struct model *m, int tgid, int index,
				  const char *process)
{
	struct vm_row *vm = model_vm(m, tgid, index);

	if (!vm)
		return NULL;
	if (!vm->comm[0])
		snprintf(vm->comm, sizeof(vm->comm), "%.15s", process ? process : "");
	if (!vm->name) {
		vm->name = collector_vm_name(c, tgid);
		collector_vm_namespace(c, tgid, vm->namespace, sizeof(vm->namespace));
	}
	vm->gone = collector_process_gone(c, tgid);
	return vm;
}

void collector_add_figures(struct collector *c, struct model *m,
			   const struct kvmmmu_thread_key *key, const struct kvmmmu_thread_id *id,
			   const struct figures *f)
{
	int tgid = (int)key->tgid, tid = (int)key->tid, vcpu;
	struct vm_row *vm = collector_model_vm(
		c, m, tgid, collector_vm_index(c, tgid, id->kvm, id->kvm_born), id->process);
	struct vcpu_row *row;

	if (!vm)
		return;
	if (c->opts.attribution == ATTRIBUTE_AUTO && id->vcpu_id >= 0)
		vcpu = id->vcpu_id;
	else
		vcpu = vcpu_map_lookup(&c->vcpus, tgid, tid);
	/* /proc was not read in time (the VM was too short): the name BPF captured */
	if (vcpu < 0)
		vcpu = vcpu_from_thread_name(id->comm);
	row = model_row(vm, vcpu, tid);
	if (!row)
		return;
	if (!row->comm[0])
		snprintf(row->comm, sizeof(row->comm), "%.15s", id->comm);
	figures_add(&row->f, f);
	figures_add(&vm->total, f);
}

/* FINAL: the last reading, SETTLED what settle_pending() saw (NULL: nothing is in flight). */
static void add_thread(struct collector *c, struct model *m, const struct kvmmmu_thread_key *k,
		       const struct kvmmmu_thread_stats *s, bool final,
		       const struct settle *settled)
{
	static struct figures f; /* large: off the stack */

	memset(&f, 0, sizeof(f));
	memcpy(f.counters, s->counters, sizeof(f.counters));
	memcpy(f.ret_pf, s->ret_pf, sizeof(f.ret_pf));
	memcpy(f.outcomes, s->outcomes, sizeof(f.outcomes));
	memcpy(f.hist, s->hist, sizeof(f.hist));
	memcpy(f.lock_wait, s->lock_wait, sizeof(f.lock_wait));
	/*
	 * A request no SPTE followed, unless in flight (settle_pending()): as
	 * resolve_pending() would (the TDP MMU traces its spurious faults).
	 */
	if (final && s->st.pending && !s->st.prefetch && !c->func_mode && !c->done_event &&
	    !settle_in_flight(settled, k, s->counters[KVMMMU_SPTE_REQUESTED])) {
		int ret = ret_pf_value(
			&c->ret_pf, kvmmmu_unset_request_is_retry(&s->st) ? "retry" : "spurious");
		int path = kvmmmu_model_path(&s->st);

		if (ret >= 0) {
			f.ret_pf[ret]++;
			f.outcomes[path][ret]++;
			f.counters[KVMMMU_PATH_FAST + path]++;
		}
	}
	collector_add_figures(c, m, k, &s->id, &f);
}

int collector_read(struct collector *c, struct model *m, bool final)
{
	int fd = bpf_map__fd(c->skel->maps.thread_stats);
	struct kvmmmu_thread_stats *s = malloc(sizeof(*s));
	static struct settle settled; /* large: off the stack */
	struct kvmmmu_thread_key k, next;
	int more;

	if (!s)
		return -ENOMEM;
	settled.n = 0;
	if (final && !c->func_mode)
		settle_pending(fd, s, &settled);
	collector_health_sum(c, &m->health);
	m->health.prog_missed = collector_prog_missed(c); /* not per tick: a syscall per program */
	for (more = !bpf_map_get_next_key(fd, NULL, &k); more; k = next) {
		more = !bpf_map_get_next_key(fd, &k, &next);
		if (!bpf_map_lookup_elem(fd, &k, s) && s->id.ready)
			add_thread(c, m, &k, s, final, &settled);
	}
	/* exited threads: nothing follows their last event */
	for (size_t i = 0; i < c->n_retired; i++)
		add_thread(c, m, &c->retired[i].key, &c->retired[i].stats, true, NULL);
	free(s);
	return mmu_extras_read(c->extras, c, m); /* sorts M */
}
