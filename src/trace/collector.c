// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collector.h"
#include "faults.skel.h"
#include "ksyms.h"
#include "log.h"
#include "mmu_extras.h"
#include "prog_info.h"
#include "threads.h"
#include "sysinfo.h"
#include "tracefs.h"

/* Tracepoints, in the order the header line lists them. */
static const struct {
	const char *group, *event;
	bool optional;
	bool patched; /* only kernels with kernel-patches/ have it; used in tracepoint mode */
	bool forks;   /* only to follow a command's descendants (follow_forks) */
} tracepoints[] = {
	{"kvmmmu", "kvm_mmu_pagetable_walk", false, false, false},
	{"kvmmmu", "kvm_mmu_walker_error", false, false, false},
	{"kvmmmu", "kvm_mmu_spte_requested", false, false, false},
	{"kvmmmu", "kvm_mmu_set_spte", false, false, false},
	{"kvmmmu", "fast_page_fault", false, false, false},
	{"kvmmmu", "kvm_tdp_mmu_spte_changed", false, false, false},
	{"kvmmmu", "handle_mmio_page_fault", false, false, false},
	{"kvmmmu", "mark_mmio_spte", false, false, false},
	{"kvmmmu", "kvm_mmu_paging_element", true, false, false},
	/* every counted fault's outcome and duration, where kernel-patches/ adds it */
	{"kvmmmu", "kvm_mmu_page_fault_done", false, true, false},
	{"kvm", "kvm_page_fault", false, false, false},
	/* end the faults of page-fault exits that requested no SPTE (tracepoint model) */
	{"kvm", "kvm_emulate_insn", false, false, false},
	{"kvm", "kvm_userspace_exit", false, false, false},
	{"sched", "sched_process_exit", false, false, false}, /* frees exited threads' entries */
	/* a command's children join the filter: sudo, timeout, a wrapper script */
	{"sched", "sched_process_fork", false, false, true},
};

/*
 * Function probes; "exit" ones also need a return probe. An fexit program
 * reads the return value after the arguments, at a fixed index: RET_ARG
 * says where (the arguments the 5.16+ prototype has), -1 where it reads none.
 * A kernel with another prototype gets the kretprobe, which reads it from
 * the return register whatever the arguments.
 */
static const struct {
	const char *func;
	bool has_exit;
	bool defines_outcome; /* needed for function-probe outcomes */
	bool may_be_absent;   /* a handler some kernels do not build: absent, it takes no fault */
	int ret_arg;
} functions[] = {
	{"kvm_mmu_page_fault", true, true, false, -1},
	{"kvm_tdp_page_fault", true, true, false, 2},
	{"paging64_page_fault", true, true, false, 2},
	/* the other handlers mmu->page_fault may point at: every fault is counted once */
	{"paging32_page_fault", true, true, true, 2},
	{"ept_page_fault", true, true, true, 2},
	{"nonpaging_page_fault", true, true, true, 2},
	{"direct_page_fault", false, false, false, -1},
	{"kvm_vcpu_gfn_to_memslot", true, false, false, -1},
};

#define N_TP (sizeof(tracepoints) / sizeof(tracepoints[0]))
#define N_FUNC (sizeof(functions) / sizeof(functions[0]))

int probe_mode_parse(const char *s, enum probe_mode *mode)
{
	static const char *const names[] = {"auto", "fentry", "kprobe", "tracepoint"};

	for (int i = 0; i < 4; i++) {
		if (!strcmp(s, names[i])) {
			*mode = (enum probe_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

static struct bpf_program *prog(struct collector *c, const char *name, const char *suffix)
{
	char full[96];

	snprintf(full, sizeof(full), "%s_%s", name, suffix);
	return bpf_object__find_program_by_name(c->skel->obj, full);
}

static void set_autoload(struct collector *c, const char *name, const char *suffix, bool on)
{
	struct bpf_program *p = prog(c, name, suffix);

	if (p)
		bpf_program__set_autoload(p, on);
}

/*
 * Loads and attaches a do-nothing fentry program: BTF and kallsyms say a
 * function could be traced, only the kernel says whether it may (lockdown,
 * BPF LSMs and missing trampolines all refuse here).
 */
static int try_fentry(struct collector *c, const char *func, char *why, size_t len)
{
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY);
	int btf_id, mod_fd = -1, fd, link;
	bool in_module;

	if (!kernel_btf_find_func(&c->kb, func, &btf_id, &in_module)) {
		snprintf(why, len, "fentry: no BTF FUNC record");
		return -ENOENT;
	}
	if (in_module) {
		mod_fd = kernel_btf_kvm_fd(&c->kb);
		if (mod_fd < 0) {
			snprintf(why, len, "fentry: kvm module BTF not loadable: %s",
				 strerror(-mod_fd));
			return mod_fd;
		}
		opts.attach_btf_obj_fd = mod_fd;
	}
	opts.attach_btf_id = btf_id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "kvmmmu_try", "GPL", insns, 2, &opts);
	if (fd < 0) {
		int err = -errno;

		snprintf(why, len, "fentry: load refused: %s%s", strerror(-err),
			 err == -EPERM ? " (lockdown or a BPF LSM)" : "");
		if (mod_fd >= 0)
			close(mod_fd);
		return err;
	}
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link < 0) {
		int err = -errno;

		snprintf(why, len, "fentry: attach refused: %s", strerror(-err));
		close(fd);
		if (mod_fd >= 0)
			close(mod_fd);
		return err;
	}
	close(link);
	close(fd);
	if (mod_fd >= 0)
		close(mod_fd);
	return 0;
}

static bool kprobe_pmu_present(void)
{
	return access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0;
}

/*
 * KVMMMU_UNPROBED=FUNC[,FUNC...]: for tests, treat FUNC as a kernel would
 * where it cannot be probed (inlined, or notrace), to check the fallbacks.
 */
static bool unprobed_by_env(const char *func)
{
	const char *list = getenv("KVMMMU_UNPROBED"), *p;
	size_t n = strlen(func);

	for (p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, func, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

enum attach_kind collector_choose_function(struct collector *c, const char *func, char *why,
					   size_t len)
{
	enum ksym_state ks = ksym_lookup(NULL, func);
	char fentry_why[160] = "";

	if (c->opts.mode == PROBE_MODE_TRACEPOINT) {
		snprintf(why, len, "not tried (--probe-mode tracepoint)");
		return ATTACH_NONE;
	}
	if (unprobed_by_env(func)) {
		snprintf(why, len, "not tried (KVMMMU_UNPROBED)");
		return ATTACH_NONE;
	}
	if (ks != KSYM_PRESENT) {
		snprintf(why, len, "%s", ksym_state_str(ks));
		return ATTACH_NONE;
	}
	if (c->opts.mode == PROBE_MODE_AUTO || c->opts.mode == PROBE_MODE_FENTRY) {
		if (!try_fentry(c, func, fentry_why, sizeof(fentry_why)))
			return ATTACH_FENTRY;
		if (c->opts.mode == PROBE_MODE_FENTRY) {
			snprintf(why, len, "%s", fentry_why);
			return ATTACH_NONE;
		}
	}
	if (!kprobe_pmu_present()) {
		snprintf(why, len, "%s%skprobe: no kprobe PMU in this kernel", fentry_why,
			 *fentry_why ? "; " : "");
		return ATTACH_NONE;
	}
	return ATTACH_KPROBE;
}

static int decode_ret_pf(struct collector *c)
{
	struct btf *b = kernel_btf_kvm_types(&c->kb);
	char *fmt;
	int err = -ENOENT;

	if (b && !ret_pf_from_btf(&c->ret_pf, b))
		return 0;
	fmt = tracefs_read_format("kvmmmu", "fast_page_fault");
	if (fmt) {
		err = ret_pf_from_format(&c->ret_pf, fmt);
		free(fmt);
	}
	return err;
}

/*
 * kvm:kvm_page_fault's error code, as an index into its raw arguments:
 * (vcpu, address, error_code) since 6.1, (address, error_code) before. From
 * BTF, else from the event's format (the vCPU came with a vcpu_id field).
 */
static int pf_exit_error_code_arg(struct kernel_btf *kb)
{
	int n = kernel_btf_tp_args(kb, "kvm_page_fault");
	char *fmt;

	if (n == 3 || n == 2)
		return n - 1;
	if (n >= 0)
		return -1;
	fmt = tracefs_read_format("kvm", "kvm_page_fault");
	n = !fmt ? -1 : strstr(fmt, "vcpu_id;") ? 2 : 1;
	free(fmt);
	return n;
}

static void plan(struct collector *c, const enum attach_kind func_kind[N_FUNC],
		 const bool raw_only[N_TP])
{
	bool outcome_funcs = true;
	struct faults_bpf__rodata *ro = c->skel->rodata;

	c->n_probes = 0;
	for (size_t i = 0; i < N_FUNC; i++) {
		struct probe_status *p = &c->probes[c->n_probes++];
		enum attach_kind k = func_kind[i];

		p->name = functions[i].func;
		p->wanted = true;
		p->kind = k;
		set_autoload(c, p->name, "fentry", k == ATTACH_FENTRY);
		set_autoload(c, p->name, "fexit", k == ATTACH_FENTRY && functions[i].has_exit);
		set_autoload(c, p->name, "kprobe", k == ATTACH_KPROBE);
		set_autoload(c, p->name, "kretprobe", k == ATTACH_KPROBE && functions[i].has_exit);
		if (functions[i].defines_outcome && k == ATTACH_NONE &&
		    !(functions[i].may_be_absent && ksym_lookup(NULL, p->name) != KSYM_PRESENT))
			outcome_funcs = false;
	}
	for (size_t i = 0; i < N_TP; i++) {
		struct probe_status *p = &c->probes[c->n_probes++];
		bool btf = kernel_btf_has_tp_btf(&c->kb, tracepoints[i].event) && !raw_only[i];

		p->name = tracepoints[i].event;
		p->group = tracepoints[i].group;
		p->optional = tracepoints[i].optional;
		p->wanted = tracepoints[i].forks ? c->opts.follow_forks
						 : !p->optional || c->opts.walk_hist;
		if (tracepoints[i].forks && !p->wanted) {
			snprintf(p->why, sizeof(p->why), "not needed: no command to follow");
		} else if (tracepoints[i].patched && outcome_funcs) {
			p->wanted = false; /* the function probes give outcome and duration */
			snprintf(p->why, sizeof(p->why),
				 "not needed: function probes give outcomes");
		} else if (tracepoints[i].patched &&
			   !tracefs_has_event(tracepoints[i].group, tracepoints[i].event)) {
			p->wanted = false;
			snprintf(p->why, sizeof(p->why),
				 "not in this kernel (kernel-patches/ adds it)");
		} else if (!p->wanted) {
			snprintf(p->why, sizeof(p->why), "off (costs an event per guest PTE)");
		}
		p->kind = !p->wanted ? ATTACH_NONE : btf ? ATTACH_TP_BTF : ATTACH_RAW_TP;
		if (tracepoints[i].patched && p->wanted)
			c->done_event = true;
		set_autoload(c, p->name, "btf", p->kind == ATTACH_TP_BTF);
		set_autoload(c, p->name, "raw", p->kind == ATTACH_RAW_TP);
	}
	c->func_mode = outcome_funcs;
	ro->func_mode = outcome_funcs;
	for (size_t i = 0; i < N_FUNC; i++)
		if (!strcmp(functions[i].func, "direct_page_fault"))
			ro->direct_probed = func_kind[i] != ATTACH_NONE;
	ro->pf_exit_rsvd_is_mmio = !sysinfo_vmx_ept();
	ro->done_event = c->done_event;
	ro->filter_pids = c->opts.filter_pids;
	ro->follow_forks = c->opts.follow_forks;
	ro->ret_pf_fixed = ret_pf_value(&c->ret_pf, "fixed");
	ro->ret_pf_spurious = ret_pf_value(&c->ret_pf, "spurious");
	ro->ret_pf_emulate = ret_pf_value(&c->ret_pf, "emulate");
	ro->ret_pf_retry = ret_pf_value(&c->ret_pf, "retry");
	ro->ret_pf_write_protected = ret_pf_value(&c->ret_pf, "write_protected") >= 0
					     ? ret_pf_value(&c->ret_pf, "write_protected")
					     : ro->ret_pf_emulate;
	ro->tdp_mmu_param = sysinfo_tdp_mmu_param();
	ro->have_rdonly_cast = kernel_btf_has_kfunc(&c->kb, "bpf_rdonly_cast");
	ro->pf_exit_error_code_arg = pf_exit_error_code_arg(&c->kb);
	ro->sample_every = c->opts.sample_every > 1 ? c->opts.sample_every : 1;
}

static int attach_one(struct collector *c, struct probe_status *p)
{
	static const char *const suffixes[] = {"fentry",    "fexit", "kprobe",
					       "kretprobe", "btf",   "raw"};
	int attached = 0;

	for (size_t s = 0; s < sizeof(suffixes) / sizeof(suffixes[0]); s++) {
		struct bpf_program *bp = prog(c, p->name, suffixes[s]);
		struct bpf_link *link;

		if (!bp || !bpf_program__autoload(bp))
			continue;
		link = collector_attach_program(c, bp);
		if (!link) {
			int err = -errno;

			snprintf(p->why, sizeof(p->why), "%s: attach failed: %s", suffixes[s],
				 strerror(-err));
			return err;
		}
		if (c->n_links == COLLECTOR_MAX_LINKS) {
			bpf_link__destroy(link);
			return -E2BIG;
		}
		c->links[c->n_links++] = link;
		attached++;
	}
	return attached ? 0 : -ENOENT;
}

struct bpf_link *collector_attach_program(struct collector *c, struct bpf_program *bp)
{
	if (bpf_program__type(bp) == BPF_PROG_TYPE_KPROBE)
		return kprobes_attach(&c->kprobes, bp);
	return bpf_program__attach(bp);
}

static void detach_all(struct collector *c)
{
	while (c->n_links)
		bpf_link__destroy(c->links[--c->n_links]);
}

/*
 * Room for twice the threads the host has now, and then some: entries are
 * allocated only for traced processes' threads and freed as they exit, so
 * this bounds what a burst of new threads can take, not what a run keeps.
 */
static unsigned int default_max_threads(void)
{
	unsigned long running, threads = 0;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%*s %*s %*s %lu/%lu", &running, &threads) != 2)
			threads = 0;
		fclose(f);
	}
	threads = 2 * threads + 1024;
	return threads < 4096 ? 4096 : threads > 65536 ? 65536 : (unsigned int)threads;
}

/*
 * Program PROG failed to load: one program must not fail the whole object.
 * A tp_btf program falls back to its raw_tp twin, an fentry/fexit pair to
 * its kprobes (or nothing); anything else is a real failure (false).
 */
static bool load_another_way(struct collector *c, const char *prog,
			     enum attach_kind func_kind[N_FUNC], bool raw_only[N_TP])
{
	size_t len = strlen(prog);

	for (size_t i = 0; i < N_TP; i++) {
		size_t n = strlen(tracepoints[i].event);

		if (!raw_only[i] && len == n + 4 && !strncmp(prog, tracepoints[i].event, n) &&
		    !strcmp(prog + n, "_btf")) {
			raw_only[i] = true;
			/* recovered: a note for -v, the log with it */
			vlog("note: %s: the tp_btf program does not load here; using raw_tp",
			     tracepoints[i].event);
			return true;
		}
	}
	for (size_t i = 0; i < N_FUNC; i++) {
		size_t n = strlen(functions[i].func);

		if (func_kind[i] == ATTACH_FENTRY && len > n &&
		    !strncmp(prog, functions[i].func, n) &&
		    (!strcmp(prog + n, "_fentry") || !strcmp(prog + n, "_fexit"))) {
			func_kind[i] = kprobe_pmu_present() && c->opts.mode != PROBE_MODE_FENTRY
					       ? ATTACH_KPROBE
					       : ATTACH_NONE;
			snprintf(c->probes[i].why, sizeof(c->probes[i].why),
				 "fentry: %s does not load here", prog);
			vlog("note: %s does not load here; %s", prog,
			     func_kind[i] == ATTACH_KPROBE ? "using kprobes" : "not probed");
			return true;
		}
	}
	return false;
}

/*
 * Prototype drift: an fexit program that reads the return value at a fixed
 * argument index would read an argument on a kernel whose prototype differs
 * (before 5.16 the handlers took four), and the verifier would not notice.
 * There the kretprobe is used, or nothing, saying why.
 */
static enum attach_kind check_prototype(struct collector *c, size_t i, char *why, size_t len)
{
	int params;

	if (functions[i].ret_arg < 0)
		return ATTACH_FENTRY;
	params = kernel_btf_func_params(&c->kb, functions[i].func);
	if (params == functions[i].ret_arg)
		return ATTACH_FENTRY;
	snprintf(why, len, "fentry: %s takes %d arguments here, kvmmmu's fexit expects %d",
		 functions[i].func, params, functions[i].ret_arg);
	if (c->opts.mode == PROBE_MODE_FENTRY || !kprobe_pmu_present())
		return ATTACH_NONE;
	return ATTACH_KPROBE;
}

/*
 * A forced --probe-mode fentry or kprobe is a promise of exact outcomes from
 * the handlers: when one of them cannot be had that way, say why and stop,
 * rather than fall back to tracepoints behind the user's back.
 */
static int check_forced_mode(struct collector *c, const enum attach_kind func_kind[N_FUNC])
{
	static const char *const mode_names[] = {"auto", "fentry", "kprobe", "tracepoint"};

	if (c->opts.mode != PROBE_MODE_FENTRY && c->opts.mode != PROBE_MODE_KPROBE)
		return 0;
	for (size_t i = 0; i < N_FUNC; i++) {
		if (!functions[i].defines_outcome || func_kind[i] != ATTACH_NONE)
			continue;
		if (functions[i].may_be_absent &&
		    ksym_lookup(NULL, functions[i].func) != KSYM_PRESENT)
			continue;
		elog("--probe-mode %s: %s cannot be probed: %s", mode_names[c->opts.mode],
		     functions[i].func, c->probes[i].why[0] ? c->probes[i].why : "attach failed");
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * The mmu_lock table, to free an exited VM's slots (threads.c). Without it
 * the table can only fill up, and contention_begin then checks every rwlock
 * the slow way: slower, not wrong.
 */
static void map_lock_table(struct collector *c)
{
	void *p = mmap(NULL, sizeof(struct kvmmmu_lock_table), PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(c->skel->maps.mmu_locks), 0);

	c->lock_table = p == MAP_FAILED ? NULL : p;
	if (!c->lock_table)
		vlog("mmu_lock table: mmap: %s", strerror(errno));
}

/*
 * A kretprobe needs an instance for every thread inside its function at
 * once: for the fault handlers every vCPU may be, so as many as the
 * per-thread maps hold (KVMMMU_KRETPROBE_MAXACTIVE overrides, for tests).
 */
static unsigned int kretprobe_maxactive(unsigned int max_threads)
{
	const char *env = getenv("KVMMMU_KRETPROBE_MAXACTIVE");

	if (env && atoi(env) > 0)
		return atoi(env);
	return max_threads;
}

/* The lock and lifecycle objects share the faults object's filter, thread map and ring set. */
static int open_extras(struct collector *c)
{
	c->extras = calloc(1, sizeof(*c->extras));
	if (!c->extras)
		return -ENOMEM;
	return mmu_extras_open(c->extras, c, c->opts.lock, c->opts.events);
}

void collector_size_thread_map(const struct collector *c, struct bpf_map *map)
{
	if (!c->prealloc_maps) {
		bpf_map__set_max_entries(map, c->max_threads);
		return;
	}
	bpf_map__set_map_flags(map, bpf_map__map_flags(map) & ~BPF_F_NO_PREALLOC);
	bpf_map__set_max_entries(map, c->max_threads < KVMMMU_PREALLOC_THREADS
					      ? c->max_threads
					      : KVMMMU_PREALLOC_THREADS);
}

int collector_open(struct collector *c, const struct collector_opts *opts)
{
	char release[128];
	enum attach_kind func_kind[N_FUNC];
	bool raw_only[N_TP] = {};
	int err, attempt;

	memset(c, 0, sizeof(*c));
	c->opts = *opts;
	c->max_threads = opts->max_threads ? opts->max_threads : default_max_threads();
	c->prealloc_maps =
		!sysinfo_release_at_least(sysinfo_kernel_release(release, sizeof(release)), 6, 1);
	if (c->prealloc_maps)
		vlog("note: kernel %s (before 6.1): per-thread maps preallocated, %d threads at "
		     "most",
		     release, KVMMMU_PREALLOC_THREADS);
	kprobes_init(&c->kprobes, kretprobe_maxactive(c->max_threads));
	err = kernel_btf_load(&c->kb);
	if (err) {
		elog("kernel BTF is not available (%s): kvmmmu needs CONFIG_DEBUG_INFO_BTF",
		     strerror(-err));
		return err;
	}
	err = decode_ret_pf(c);
	if (err) {
		elog("cannot decode RET_PF_* values: no RET_PF_ enumerators in BTF and no "
		     "usable kvmmmu:fast_page_fault format");
		return err;
	}
	{
		/* every name any object asks kallsyms about, in one pass */
		const char *names[N_FUNC + 4];
		size_t n = 0;

		for (size_t i = 0; i < N_FUNC; i++)
			names[n++] = functions[i].func;
		names[n++] = "kvm_mmu_load";
		names[n++] = "kvm_mmu_free_roots";
		names[n++] = "queued_write_lock_slowpath";
		names[n++] = "fast_page_fault";
		ksym_prefetch(names, n);
	}
	for (size_t i = 0; i < N_FUNC; i++) {
		func_kind[i] = collector_choose_function(c, functions[i].func, c->probes[i].why,
							 sizeof(c->probes[i].why));
		if (func_kind[i] == ATTACH_FENTRY)
			func_kind[i] =
				check_prototype(c, i, c->probes[i].why, sizeof(c->probes[i].why));
	}
	err = check_forced_mode(c, func_kind);
	if (err)
		return err;

	/* An attach that fails after load changes what the programs must do: reload without it. */
	for (attempt = 0; attempt < 1 + (int)(N_FUNC + N_TP); attempt++) {
		bool retry = false;

		log_libbpf_forget();
		c->skel = faults_bpf__open();
		if (!c->skel) {
			err = -errno;
			elog("cannot open the BPF object: %s", strerror(-err));
			log_libbpf_excerpt();
			return err;
		}
		plan(c, func_kind, raw_only);
		collector_size_thread_map(c, c->skel->maps.thread_stats);
		bpf_map__set_max_entries(c->skel->maps.seen_procs, c->max_threads);
		err = faults_bpf__load(c->skel);
		if (err && load_another_way(c, log_libbpf_failed_prog(), func_kind, raw_only)) {
			faults_bpf__destroy(c->skel);
			c->skel = NULL;
			err = check_forced_mode(c, func_kind);
			if (err)
				return err;
			continue;
		}
		if (err) {
			elog("cannot load the BPF programs: %s%s", strerror(-err),
			     err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)"
					   : "");
			/* nothing loaded: now libbpf's words matter, unless the kernel said no */
			if (err != -EPERM)
				log_libbpf_excerpt();
			faults_bpf__destroy(c->skel);
			c->skel = NULL;
			return err;
		}
		/* the filter holds its processes before any program runs: none is missed */
		for (size_t i = 0; c->opts.filter_pids && i < c->opts.n_pids; i++) {
			err = collector_trace_pid(c, c->opts.pids[i]);
			if (err) {
				elog("cannot add pid %d to the BPF filter: %s", c->opts.pids[i],
				     strerror(-err));
				faults_bpf__destroy(c->skel);
				c->skel = NULL;
				return err;
			}
		}
		for (size_t i = 0; i < c->n_probes && !retry; i++) {
			struct probe_status *p = &c->probes[i];

			if (p->kind == ATTACH_NONE)
				continue;
			if (attach_one(c, p)) {
				p->kind = ATTACH_NONE;
				if (i < N_FUNC) {
					func_kind[i] = ATTACH_NONE;
					retry = true;
				}
			}
		}
		if (!retry) {
			c->health[c->n_health++] = &c->skel->bss->health;
			map_lock_table(c);
			err = collector_open_news(c);
			if (!err)
				err = open_extras(c);
			/* the kernel's BTF is for choosing and loading: tens of MiB not kept */
			kernel_btf_free(&c->kb);
			return err;
		}
		err = check_forced_mode(c, func_kind);
		if (err) {
			detach_all(c);
			faults_bpf__destroy(c->skel);
			c->skel = NULL;
			return err;
		}
		detach_all(c);
		faults_bpf__destroy(c->skel);
		c->skel = NULL;
	}
	return -ELOOP;
}

void collector_arm(struct collector *c)
{
	c->skel->bss->armed = true;
}

int collector_trace_pid(struct collector *c, int pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.traced_pids), &key, &one, BPF_ANY))
		return -errno;
	return 0;
}

int collector_add_object(struct collector *c, collector_retire_fn fn, void *ctx,
			 const struct kvmmmu_health *health)
{
	if (c->n_hooks == COLLECTOR_MAX_HOOKS || c->n_health == COLLECTOR_MAX_HOOKS)
		return -E2BIG;
	c->hooks[c->n_hooks].fn = fn;
	c->hooks[c->n_hooks++].ctx = ctx;
	c->health[c->n_health++] = health;
	return 0;
}

void collector_health_sum(const struct collector *c, struct kvmmmu_health *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < c->n_health; i++) {
		for (size_t k = 0; k < N_HEALTH_FIELDS; k++)
			*(__u64 *)((char *)sum + health_fields[k].offset) +=
				health_value(c->health[i], &health_fields[k]);
	}
	/* user space's own counts, not BPF's */
	sum->kprobe_missed = kprobes_missed(&c->kprobes);
	sum->prog_missed = 0;
}

__u64 collector_prog_missed(const struct collector *c)
{
	struct prog_info_sum sum = {};

	prog_info_add(c->skel->obj, &sum);
	return sum.recursion_misses;
}

const struct probe_status *collector_probe(const struct collector *c, const char *name)
{
	for (size_t i = 0; i < c->n_probes; i++)
		if (!strcmp(c->probes[i].name, name))
			return &c->probes[i];
	return NULL;
}

static bool attached(const struct collector *c, const char *name)
{
	const struct probe_status *p = collector_probe(c, name);

	return p && p->kind != ATTACH_NONE;
}

bool collector_hist_available(const struct collector *c, int hist, const char **why)
{
	switch (hist) {
	case KVMMMU_HIST_FAULT:
		*why = "needs kvm_mmu_page_fault (fentry or kprobe), or the "
		       "kvm_mmu_page_fault_done "
		       "tracepoint of kernel-patches/";
		return attached(c, "kvm_mmu_page_fault") || attached(c, "kvm_mmu_page_fault_done");
	case KVMMMU_HIST_FAST:
		*why = "needs a page-fault handler probe and the fast_page_fault tracepoint";
		return attached(c, "fast_page_fault") && (attached(c, "kvm_tdp_page_fault"));
	case KVMMMU_HIST_SLOW:
		*why = "needs the page-fault handlers (fentry or kprobe)";
		return attached(c, "kvm_tdp_page_fault") || attached(c, "paging64_page_fault");
	case KVMMMU_HIST_WALK:
		*why = "off: add walk_ns to --metric (kvm_mmu_paging_element, 4 events a fault)";
		return attached(c, "kvm_mmu_paging_element") &&
		       attached(c, "kvm_mmu_pagetable_walk");
	case KVMMMU_HIST_MEMSLOT:
		*why = "needs kvm_vcpu_gfn_to_memslot and kvm_mmu_page_fault (fentry or kprobe)";
		return attached(c, "kvm_vcpu_gfn_to_memslot") && attached(c, "kvm_mmu_page_fault");
	case KVMMMU_HIST_WALK_TO_SPTE:
		/* The tracepoint model's fault_ns: function probes time the fault itself. */
		if (c->func_mode) {
			*why = "not measured with function probes: fault_ns times the whole fault";
			return false;
		}
		*why = "needs kvm_mmu_pagetable_walk and kvm_mmu_set_spte";
		return attached(c, "kvm_mmu_pagetable_walk") && attached(c, "kvm_mmu_set_spte");
	}
	*why = "unknown histogram";
	return false;
}

void collector_close(struct collector *c)
{
	if (c->extras)
		mmu_extras_close(c->extras);
	free(c->extras);
	collector_free_threads(c);
	if (c->lock_table)
		munmap(c->lock_table, sizeof(*c->lock_table));
	detach_all(c);
	faults_bpf__destroy(c->skel);
	kprobes_close(&c->kprobes);
	ret_pf_free(&c->ret_pf);
	kernel_btf_free(&c->kb);
	memset(c, 0, sizeof(*c));
}
