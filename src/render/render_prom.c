// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_prom.h"

const char *const prom_collector_names[PROM_N_COLLECTORS] = {
	[PROM_FAULTS] = "faults",	  [PROM_LATENCY] = "latency",
	[PROM_MMU_LOCK] = "mmu_lock",	  [PROM_MEMSLOT] = "memslot",
	[PROM_MMU_EVENTS] = "mmu_events", [PROM_KVM_STATS] = "kvm_stats",
	[PROM_PER_VCPU] = "per_vcpu",
};

void prom_opts_default(struct prom_opts *o)
{
	for (int c = 0; c < PROM_N_COLLECTORS; c++)
		o->collector[c] = c != PROM_PER_VCPU && c != PROM_MEMSLOT;
}

int prom_collector_index(const char *name)
{
	for (int c = 0; c < PROM_N_COLLECTORS; c++)
		if (!strcmp(prom_collector_names[c], name))
			return c;
	return -1;
}

static struct prom_toggles *toggles_of(struct prom_state *st, int pid, int index)
{
	struct prom_toggles *t;

	for (size_t i = 0; i < st->n_vms; i++)
		if (st->vms[i].pid == pid && st->vms[i].index == index)
			return &st->vms[i];
	if (st->n_vms == st->cap_vms) {
		size_t cap = st->cap_vms ? 2 * st->cap_vms : 8;

		t = realloc(st->vms, cap * sizeof(*t));
		if (!t)
			return NULL;
		st->vms = t;
		st->cap_vms = cap;
	}
	t = &st->vms[st->n_vms++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->index = index;
	return t;
}

static const struct prom_toggles *find_toggles(const struct prom_state *st, const struct vm_row *vm)
{
	for (size_t i = 0; st && i < st->n_vms; i++)
		if (st->vms[i].pid == vm->pid && st->vms[i].index == vm->index)
			return &st->vms[i];
	return NULL;
}

static void hist_add(struct kvmmmu_hist *h, __u64 ns)
{
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->slots[kvmmmu_hist_slot(ns)]++;
}

int prom_state_update(struct prom_state *st, const struct snapshot *snap)
{
	for (size_t i = snap->timeline_new; i < snap->n_timeline; i++) {
		const struct kvmmmu_event *ev = &snap->timeline[i].ev;
		struct prom_toggles *t;

		if (ev->kind != KVMMMU_EV_DIRTY_LOG_ON && ev->kind != KVMMMU_EV_DIRTY_LOG_OFF)
			continue;
		t = toggles_of(st, (int)ev->tgid, snap->timeline[i].vm_index);
		if (!t)
			return -ENOMEM;
		hist_add(ev->kind == KVMMMU_EV_DIRTY_LOG_ON ? &t->on : &t->off, ev->duration_ns);
	}
	return 0;
}

void prom_state_forget(struct prom_state *st, int pid)
{
	for (size_t i = st->n_vms; i-- > 0;) /* every VM of the process */
		if (st->vms[i].pid == pid)
			st->vms[i] = st->vms[--st->n_vms];
}

void prom_state_free(struct prom_state *st)
{
	free(st->vms);
	memset(st, 0, sizeof(*st));
}

bool prom_collector_ok(const struct snapshot *snap, enum prom_collector c)
{
	switch (c) {
	case PROM_LATENCY:
		return snap->hist_available[KVMMMU_HIST_FAULT] ||
		       snap->hist_available[KVMMMU_HIST_SLOW] ||
		       snap->hist_available[KVMMMU_HIST_WALK_TO_SPTE];
	case PROM_MMU_LOCK:
		return snap->lock_ok;
	case PROM_MEMSLOT:
		return snap->hist_available[KVMMMU_HIST_MEMSLOT];
	case PROM_MMU_EVENTS:
		return snap->events_ok;
	case PROM_KVM_STATS:
		for (size_t i = 0; i < snap->m.n_vms; i++) {
			const struct vm_stats *v = snapshot_vm_kvm(snap, &snap->m.vms[i]);

			if (!v || v->missed || v->stale)
				return false;
		}
		return true;
	default:
		return true;
	}
}

/* ---- labels ---- */

/*
 * A VM's "vm" label: its name, or NAME:PID while another VM has the same
 * name, NAME:PID/INDEX when that VM is of the same process.
 */
struct vm_label {
	char text[160];
};

static const char *vm_name(const struct vm_row *vm)
{
	return vm->name ? vm->name : vm->comm;
}

static struct vm_label *vm_labels(const struct model *m)
{
	struct vm_label *l = calloc(m->n_vms ? m->n_vms : 1, sizeof(*l));

	for (size_t i = 0; l && i < m->n_vms; i++) {
		bool shared = false;

		for (size_t j = 0; j < m->n_vms && !shared; j++)
			shared = j != i && !strcmp(vm_name(&m->vms[i]), vm_name(&m->vms[j]));
		if (shared && model_process_vms(m, m->vms[i].pid) > 1)
			snprintf(l[i].text, sizeof(l[i].text), "%s:%d/%d", vm_name(&m->vms[i]),
				 m->vms[i].pid, m->vms[i].index);
		else if (shared)
			snprintf(l[i].text, sizeof(l[i].text), "%s:%d", vm_name(&m->vms[i]),
				 m->vms[i].pid);
		else
			snprintf(l[i].text, sizeof(l[i].text), "%s", vm_name(&m->vms[i]));
	}
	return l;
}

/* The VMM, from its process name (as the kernel cuts it, 15 bytes). */
static const char *vmm_of(const char *comm)
{
	static const struct {
		const char *prefix, *vmm;
	} known[] = {
		{"qemu", "qemu"},
		{"firecracker", "firecracker"},
		{"cloud-hyperviso", "cloud-hypervisor"},
		{"crosvm", "crosvm"},
		{"kvmtool", "kvmtool"},
		{"lkvm", "kvmtool"},
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strncmp(comm, known[i].prefix, strlen(known[i].prefix)))
			return known[i].vmm;
	return comm;
}

/* ---- families ---- */

struct ctx {
	struct prom_writer *w;
	const struct snapshot *snap;
	const struct prom_state *st;
	const struct prom_opts *o;
	struct vm_label *vm;
};

/* A counter family of one per-VM figure, at OFFSET in the VM's totals. */
static void vm_counter(struct ctx *x, const char *name, const char *help, size_t offset)
{
	prom_family(x->w, name, PROM_COUNTER, help);
	for (size_t i = 0; i < x->snap->m.n_vms; i++) {
		const struct figures *f = &x->snap->m.vms[i].total;
		struct prom_label l[] = {{"vm", x->vm[i].text}};

		prom_u64(x->w, l, 1, *(const __u64 *)((const char *)f + offset));
	}
}

static void vm_seconds(struct ctx *x, const char *name, const char *help, size_t offset)
{
	prom_family(x->w, name, PROM_COUNTER, help);
	for (size_t i = 0; i < x->snap->m.n_vms; i++) {
		const struct figures *f = &x->snap->m.vms[i].total;
		struct prom_label l[] = {{"vm", x->vm[i].text}};

		prom_double(x->w, l, 1, (double)*(const __u64 *)((const char *)f + offset) / 1e9);
	}
}

/* A histogram family, per VM, of figures' histogram at OFFSET; only if the probes give it. */
static void vm_hist(struct ctx *x, const char *name, const char *help, size_t offset)
{
	prom_family(x->w, name, PROM_HISTOGRAM, help);
	for (size_t i = 0; i < x->snap->m.n_vms; i++) {
		const struct figures *f = &x->snap->m.vms[i].total;
		struct prom_label l[] = {{"vm", x->vm[i].text}};

		prom_histogram(x->w, l, 1, (const void *)((const char *)f + offset));
	}
}

/* Whether outcome slot R is worth a series: it has faults, or it is one a fault can end with. */
static bool result_shown(const struct snapshot *snap, int r)
{
	static const char *const ending[] = {"fixed", "spurious", "emulate", "retry",
					     "write_protected"};

	if (!snap->ret_pf.name[r])
		return false;
	for (size_t i = 0; i < sizeof(ending) / sizeof(ending[0]); i++)
		if (!strcmp(snap->ret_pf.name[r], ending[i]))
			return true;
	for (size_t i = 0; i < snap->m.n_vms; i++)
		if (snap->m.vms[i].total.ret_pf[r])
			return true;
	return false;
}

static void faults(struct ctx *x)
{
	const struct snapshot *s = x->snap;

	bool shown[KVMMMU_RET_PF_SLOTS];

	for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++)
		shown[r] = result_shown(s, r);
	prom_family(x->w, "kvmmmu_page_faults_total", PROM_COUNTER,
		    "KVM MMU page faults by the path that ended them and their RET_PF_* outcome "
		    "(summed over a VM: KVM's pf_taken)");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (int p = 0; p < KVMMMU_N_FAULT_PATHS; p++)
			for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++) {
				struct prom_label l[] = {{"vm", x->vm[i].text},
							 {"path", kvmmmu_fault_path_names[p]},
							 {"result", s->ret_pf.name[r]}};

				if (shown[r])
					prom_u64(x->w, l, 3, s->m.vms[i].total.outcomes[p][r]);
			}
	if (!x->o->collector[PROM_PER_VCPU])
		return;
	prom_family(x->w, "kvmmmu_vcpu_page_faults_total", PROM_COUNTER,
		    "KVM MMU page faults per vCPU, by RET_PF_* outcome");
	for (size_t i = 0; i < s->m.n_vms; i++) {
		const struct vm_row *vm = &s->m.vms[i];

		for (size_t k = 0; k < vm->n_rows; k++) {
			char vcpu[16];

			if (vm->rows[k].vcpu < 0)
				continue; /* not a vCPU: its faults are in the VM's */
			snprintf(vcpu, sizeof(vcpu), "%d", vm->rows[k].vcpu);
			for (int r = 0; r < KVMMMU_RET_PF_SLOTS; r++) {
				struct prom_label l[] = {{"vm", x->vm[i].text},
							 {"vcpu", vcpu},
							 {"result", s->ret_pf.name[r]}};

				if (shown[r])
					prom_u64(x->w, l, 3, vm->rows[k].f.ret_pf[r]);
			}
		}
	}
}

#define FIG(member) offsetof(struct figures, member)

/* The catalogue's per-fault counters that have a family of their own (KVMMMU_SHOW_PROM). */
static void fault_counters(struct ctx *x)
{
	for (int k = 0; k < KVMMMU_N_COUNTERS; k++)
		if ((kvmmmu_counter_show[k] & KVMMMU_SHOW_PROM) && kvmmmu_counter_prom[k])
			vm_counter(x, kvmmmu_counter_prom[k], kvmmmu_counter_help[k],
				   FIG(counters[k]));
}

/* --metric phases: each phase's time per fault, the phases measured here only. */
static void phases(struct ctx *x)
{
	const struct snapshot *s = x->snap;
	bool any = false;

	for (int p = 0; p < KVMMMU_N_PHASES; p++)
		any |= s->hist_available[kvmmmu_phase_hist[p]];
	if (!any)
		return;
	prom_family(x->w, "kvmmmu_page_fault_phase_duration_seconds", PROM_HISTOGRAM,
		    "A fault's time in one phase: the guest walk, the host page (pfn), mmu_lock "
		    "waits, the mapping, or the rest (other); faults that went through it");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (int p = 0; p < KVMMMU_N_PHASES; p++) {
			int h = kvmmmu_phase_hist[p];
			struct prom_label l[] = {{"vm", x->vm[i].text},
						 {"phase", kvmmmu_phase_names[p]}};

			if (s->hist_available[h])
				prom_histogram(x->w, l, 2, &s->m.vms[i].total.hist[h]);
		}
}

static void latency(struct ctx *x)
{
	const struct snapshot *s = x->snap;

	if (s->hist_available[KVMMMU_HIST_FAST] || s->hist_available[KVMMMU_HIST_SLOW]) {
		static const struct {
			int hist;
			const char *path;
		} paths[] = {{KVMMMU_HIST_FAST, "fast"}, {KVMMMU_HIST_SLOW, "slow"}};

		prom_family(x->w, "kvmmmu_page_fault_duration_seconds", PROM_HISTOGRAM,
			    "Page-fault time from its start to its handler's end: fixed on the "
			    "fast path (no mmu_lock), or handled on the slow one (TDP MMU, "
			    "shadow or direct MMU)");
		for (size_t i = 0; i < s->m.n_vms; i++)
			for (size_t p = 0; p < 2; p++) {
				struct prom_label l[] = {{"vm", x->vm[i].text},
							 {"path", paths[p].path}};

				if (s->hist_available[paths[p].hist])
					prom_histogram(x->w, l, 2,
						       &s->m.vms[i].total.hist[paths[p].hist]);
			}
	}
	if (s->hist_available[KVMMMU_HIST_FAULT])
		vm_hist(x, "kvmmmu_mmu_page_fault_duration_seconds",
			"kvm_mmu_page_fault() entry to exit: the whole fault, emulation included",
			FIG(hist[KVMMMU_HIST_FAULT]));
	if (s->hist_available[KVMMMU_HIST_WALK_TO_SPTE])
		vm_hist(x, "kvmmmu_walk_to_spte_duration_seconds",
			"Shadow paging: the guest page-table walk to the SPTE set for the fault",
			FIG(hist[KVMMMU_HIST_WALK_TO_SPTE]));
	phases(x);
}

static void memslot(struct ctx *x)
{
	const struct snapshot *s = x->snap;

	/* not probed here (tracepoints only): no lookups counted, so no 0 for them */
	if (!s->hist_available[KVMMMU_HIST_MEMSLOT])
		return;
	prom_family(x->w, "kvmmmu_memslot_lookups_total", PROM_COUNTER,
		    "kvm_vcpu_gfn_to_memslot() calls, inside page faults or outside them");
	for (size_t i = 0; i < s->m.n_vms; i++) {
		const struct figures *f = &s->m.vms[i].total;
		struct prom_label in[] = {{"vm", x->vm[i].text}, {"context", "fault"}};
		struct prom_label out[] = {{"vm", x->vm[i].text}, {"context", "other"}};

		prom_u64(x->w, in, 2, f->counters[KVMMMU_MEMSLOT_LOOKUPS]);
		prom_u64(x->w, out, 2, f->counters[KVMMMU_MEMSLOT_OTHER]);
	}
	vm_hist(x, "kvmmmu_memslot_lookup_duration_seconds",
		"One kvm_vcpu_gfn_to_memslot() call inside a page fault",
		FIG(hist[KVMMMU_HIST_MEMSLOT]));
}

static const char *const lock_modes[KVMMMU_LOCK_MODES] = {"read", "write"};

static void mmu_lock(struct ctx *x)
{
	const struct snapshot *s = x->snap;

	prom_family(x->w, "kvmmmu_mmu_lock_wait_seconds", PROM_HISTOGRAM,
		    "Waits for kvm->mmu_lock inside page faults, by how it was taken");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (int mode = 0; mode < KVMMMU_LOCK_MODES; mode++) {
			struct prom_label l[] = {{"vm", x->vm[i].text}, {"mode", lock_modes[mode]}};

			prom_histogram(x->w, l, 2, &s->m.vms[i].total.lock_wait[mode]);
		}
	prom_family(x->w, "kvmmmu_mmu_lock_outside_fault_waits_total", PROM_COUNTER,
		    "Waits for kvm->mmu_lock outside page faults (root loads, zaps, ioctls)");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (int mode = 0; mode < KVMMMU_LOCK_MODES; mode++) {
			struct prom_label l[] = {{"vm", x->vm[i].text}, {"mode", lock_modes[mode]}};

			prom_u64(x->w, l, 2, s->m.vms[i].total.lock_other_waits[mode]);
		}
	prom_family(x->w, "kvmmmu_mmu_lock_outside_fault_wait_seconds_total", PROM_COUNTER,
		    "Time waited for kvm->mmu_lock outside page faults");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (int mode = 0; mode < KVMMMU_LOCK_MODES; mode++) {
			struct prom_label l[] = {{"vm", x->vm[i].text}, {"mode", lock_modes[mode]}};

			prom_double(x->w, l, 2,
				    (double)s->m.vms[i].total.lock_other_wait_ns[mode] / 1e9);
		}
}

static void dirty_log(struct ctx *x)
{
	static const struct {
		const char *call;
		int counter, time;
	} calls[] = {
		{"enable", KVMMMU_DIRTY_LOG_ENABLES, DIRTY_LOG_ENABLE_NS},
		{"disable", KVMMMU_DIRTY_LOG_DISABLES, DIRTY_LOG_DISABLE_NS},
		{"get", KVMMMU_DIRTY_LOG_GETS, DIRTY_LOG_GET_NS},
		{"clear", KVMMMU_DIRTY_LOG_CLEARS, DIRTY_LOG_CLEAR_NS},
	};
	const struct snapshot *s = x->snap;
	const size_t n_calls = sizeof(calls) / sizeof(calls[0]);

	prom_family(x->w, "kvmmmu_dirty_log_calls_total", PROM_COUNTER,
		    "Dirty-log calls: memslot updates that turned it on or off, "
		    "KVM_GET_DIRTY_LOG, KVM_CLEAR_DIRTY_LOG");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (size_t k = 0; k < n_calls; k++) {
			struct prom_label l[] = {{"vm", x->vm[i].text}, {"call", calls[k].call}};

			prom_u64(x->w, l, 2, s->m.vms[i].total.mmu[calls[k].counter]);
		}
	prom_family(x->w, "kvmmmu_dirty_log_call_seconds_total", PROM_COUNTER,
		    "Time the kernel took in dirty-log calls, all calls summed");
	for (size_t i = 0; i < s->m.n_vms; i++)
		for (size_t k = 0; k < n_calls; k++) {
			struct prom_label l[] = {{"vm", x->vm[i].text}, {"call", calls[k].call}};

			prom_double(x->w, l, 2,
				    (double)s->m.vms[i].total.mmu_ns[calls[k].time] / 1e9);
		}
	prom_family(x->w, "kvmmmu_dirty_log_toggle_duration_seconds", PROM_HISTOGRAM,
		    "One memslot update that turned dirty logging on or off (the seeds' 45 s "
		    "disable on 96 vCPUs)");
	for (size_t i = 0; i < s->m.n_vms; i++) {
		const struct prom_toggles *t = find_toggles(x->st, &s->m.vms[i]);
		static const struct prom_toggles none;
		struct prom_label on[] = {{"vm", x->vm[i].text}, {"direction", "enable"}};
		struct prom_label off[] = {{"vm", x->vm[i].text}, {"direction", "disable"}};

		prom_histogram(x->w, on, 2, t ? &t->on : &none.on);
		prom_histogram(x->w, off, 2, t ? &t->off : &none.off);
	}
}

static void mmu_events(struct ctx *x)
{
	/* the catalogue's counters with a family of their own, in its order */
	for (int k = 0; k < KVMMMU_N_MMU_COUNTERS; k++)
		if (kvmmmu_mmu_counter_prom[k])
			vm_counter(x, kvmmmu_mmu_counter_prom[k], kvmmmu_mmu_counter_help[k],
				   FIG(mmu[k]));
	vm_seconds(x, "kvmmmu_mmu_root_load_seconds_total", "Time in kvm_mmu_load, all calls",
		   FIG(mmu_ns[ROOT_LOAD_NS]));
	dirty_log(x);
}

/* ---- VMs and the exporter's own ---- */

static void vm_info(struct ctx *x)
{
	const struct snapshot *s = x->snap;

	prom_family(x->w, "kvmmmu_vm_info", PROM_GAUGE,
		    "A traced VM: its name, KubeVirt namespace, VMM process and pid");
	for (size_t i = 0; i < s->m.n_vms; i++) {
		const struct vm_row *vm = &s->m.vms[i];
		char pid[16];
		struct prom_label l[] = {{"vm", x->vm[i].text},
					 {"namespace", vm->namespace},
					 {"pid", pid},
					 {"vmm", vmm_of(vm->comm)}};

		snprintf(pid, sizeof(pid), "%d", vm->pid);
		prom_u64(x->w, l, 4, 1);
	}
	prom_family(x->w, "kvmmmu_vm_vcpus", PROM_GAUGE, "vCPUs of the VM seen so far");
	for (size_t i = 0; i < s->m.n_vms; i++) {
		const struct vm_row *vm = &s->m.vms[i];
		struct prom_label l[] = {{"vm", x->vm[i].text}};
		__u64 n = 0;

		for (size_t k = 0; k < vm->n_rows; k++)
			n += vm->rows[k].vcpu >= 0;
		prom_u64(x->w, l, 1, n);
	}
}

static void probes(struct ctx *x)
{
	const struct snapshot *s = x->snap;

	prom_family(x->w, "kvmmmu_probe_attached", PROM_GAUGE,
		    "Whether a probe kvmmmu wants is attached (1), and how");
	for (size_t i = 0; i < s->n_probes; i++) {
		const struct probe_status *p = &s->probes[i];
		char probe[96];
		bool dup = false;
		struct prom_label l[] = {{"probe", probe}, {"mode", attach_kind_str(p->kind)}};

		if (!p->wanted)
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = s->probes[j].wanted && !strcmp(s->probes[j].name, p->name) &&
			      !s->probes[j].group == !p->group &&
			      (!p->group || !strcmp(s->probes[j].group, p->group));
		if (dup)
			continue; /* another object's probe of the same point */
		snprintf(probe, sizeof(probe), "%s%s%s", p->group ? p->group : "",
			 p->group ? ":" : "", p->name);
		prom_u64(x->w, l, 2, p->kind != ATTACH_NONE);
	}
}

static void dropped(struct ctx *x)
{
	const struct kvmmmu_health *h = &x->snap->m.health;

	prom_family(x->w, "kvmmmu_events_dropped_total", PROM_COUNTER,
		    "Events kvmmmu could not count, by why: any of them makes some figure short");
	for (size_t k = 0; k < N_HEALTH_FIELDS; k++) {
		struct prom_label l[] = {{"reason", health_fields[k].reason}};

		prom_u64(x->w, l, 1, health_value(h, &health_fields[k]));
	}
}

void render_prom(struct prom_writer *w, const struct snapshot *snap, const struct prom_state *st,
		 const struct prom_opts *o)
{
	struct ctx x = {.w = w, .snap = snap, .st = st, .o = o, .vm = vm_labels(&snap->m)};
	const char **labels;

	if (!x.vm) {
		if (!w->err)
			w->err = -ENOMEM;
		return;
	}
	labels = calloc(snap->m.n_vms ? snap->m.n_vms : 1, sizeof(*labels));
	if (!labels) {
		if (!w->err)
			w->err = -ENOMEM;
		free(x.vm);
		return;
	}
	for (size_t i = 0; i < snap->m.n_vms; i++)
		labels[i] = x.vm[i].text;
	vm_info(&x);
	if (o->collector[PROM_FAULTS]) {
		faults(&x);
		render_prom_fault_kinds(w, snap, labels);
		fault_counters(&x);
	}
	if (o->collector[PROM_LATENCY])
		latency(&x);
	if (o->collector[PROM_MEMSLOT])
		memslot(&x);
	if (o->collector[PROM_MMU_LOCK] && snap->lock_ok)
		mmu_lock(&x);
	if (o->collector[PROM_MMU_EVENTS] && snap->events_ok)
		mmu_events(&x);
	if (o->collector[PROM_KVM_STATS])
		render_prom_kvm_stats(w, snap, labels);
	probes(&x);
	dropped(&x);
	free(labels);
	free(x.vm);
}
