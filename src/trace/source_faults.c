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

#include "source_faults.h" /* first: the skeleton needs kvmmmu.h's types */
#include "faults.skel.h"
#include "ksyms.h"
#include "log.h"
#include "prog_info.h"
#include "tracefs.h"

static int decode_ret_pf(struct faults_source *fs)
{
	struct btf *b = kernel_btf_kvm_types(&fs->engine->kb);
	char *fmt;
	int err = -ENOENT;

	if (b && !ret_pf_from_btf(&fs->ret_pf, b))
		return 0;
	fmt = tracefs_read_format("kvmmmu", "fast_page_fault");
	if (fmt) {
		err = ret_pf_from_format(&fs->ret_pf, fmt);
		free(fmt);
	}
	return err;
}

/*
 * Program BP failed to load: one program must not fail the whole object.
 * A tp_btf program falls back to its raw_tp twin, an fentry/fexit pair to
 * its kprobes (or nothing); anything else is a real failure (false).
 */
static bool load_another_way(struct faults_source *fs, const struct bpf_program *bp,
			     enum attach_kind func_kind[FAULTS_N_FUNC], bool raw_only[FAULTS_N_TP])
{
	for (size_t i = 0; bp && i < FAULTS_N_FUNC + FAULTS_N_TP; i++) {
		struct probe_progs pp = faults_probe_progs(fs, i);

		if (!probe_progs_has(&pp, bp))
			continue;
		if (i >= FAULTS_N_FUNC && pp.prog[SLOT_TP_BTF] == bp &&
		    !raw_only[i - FAULTS_N_FUNC]) {
			raw_only[i - FAULTS_N_FUNC] = true;
			/* recovered: a note for -v, the log with it */
			vlog("note: %s: the tp_btf program does not load here; using raw_tp",
			     faults_tracepoints[i - FAULTS_N_FUNC].event);
			return true;
		}
		if (i < FAULTS_N_FUNC && func_kind[i] == ATTACH_FENTRY &&
		    (pp.prog[SLOT_FENTRY] == bp || pp.prog[SLOT_FEXIT] == bp)) {
			func_kind[i] =
				attach_kprobe_fallback(fs->engine) ? ATTACH_KPROBE : ATTACH_NONE;
			snprintf(fs->probes[i].why, sizeof(fs->probes[i].why),
				 "fentry: %s does not load here", bpf_program__name(bp));
			vlog("note: %s does not load here; %s", bpf_program__name(bp),
			     func_kind[i] == ATTACH_KPROBE ? "using kprobes" : "not probed");
			return true;
		}
		return false;
	}
	return false;
}

/*
 * The load failed and no watched program's log says which was refused (a
 * refusal before the verifier ran): once, every watched program the other
 * way (tp_btf as raw_tp, fentry as kprobes), before giving up.
 */
static bool every_other_way(struct faults_source *fs, bool *done,
			    enum attach_kind func_kind[FAULTS_N_FUNC], bool raw_only[FAULTS_N_TP])
{
	bool changed = false;

	if (*done || !fs->watch.n)
		return false;
	*done = true;
	for (size_t i = 0; i < FAULTS_N_TP; i++) {
		changed |= !raw_only[i];
		raw_only[i] = true;
	}
	for (size_t i = 0; i < FAULTS_N_FUNC; i++) {
		if (func_kind[i] != ATTACH_FENTRY)
			continue;
		func_kind[i] = attach_kprobe_fallback(fs->engine) ? ATTACH_KPROBE : ATTACH_NONE;
		snprintf(fs->probes[i].why, sizeof(fs->probes[i].why),
			 "fentry: the object did not load with it");
		changed = true;
	}
	if (changed)
		vlog("note: the faults object did not load, and no program's log says why: "
		     "loading it with raw_tp and kprobes instead");
	return changed;
}

/*
 * A forced --probe-mode fsession, fentry or kprobe is a promise of exact
 * outcomes from the handlers, and fsession's of one program for both ends
 * of each: when one of them cannot be had that way, say why and stop,
 * rather than fall back behind the user's back.
 */
static int check_forced_mode(struct faults_source *fs,
			     const enum attach_kind func_kind[FAULTS_N_FUNC])
{
	bool fsession = fs->opts->mode == PROBE_MODE_FSESSION;

	if (!fsession && fs->opts->mode != PROBE_MODE_FENTRY && fs->opts->mode != PROBE_MODE_KPROBE)
		return 0;
	for (size_t i = 0; i < FAULTS_N_FUNC; i++) {
		bool had = fsession && faults_session_fits(fs, i) ? func_kind[i] == ATTACH_FSESSION
								  : func_kind[i] != ATTACH_NONE;

		if (!faults_functions[i].defines_outcome || had)
			continue;
		if (faults_functions[i].may_be_absent &&
		    ksym_lookup(NULL, faults_functions[i].func) != KSYM_PRESENT)
			continue;
		elog("%s%s: %s cannot be probed: %s", fs->engine->mode_origin,
		     probe_mode_names[fs->opts->mode], faults_functions[i].func,
		     fs->probes[i].why[0] ? fs->probes[i].why : "attach failed");
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * The fsession programs did not load (ERR): their functions go back to
 * fentry, to be loaded again from the faults object. False when ERR is 0.
 */
static bool session_failed(struct faults_source *fs, int err,
			   enum attach_kind func_kind[FAULTS_N_FUNC])
{
	if (!err)
		return false;
	for (size_t i = 0; i < FAULTS_N_FUNC; i++) {
		if (func_kind[i] != ATTACH_FSESSION)
			continue;
		func_kind[i] = ATTACH_FENTRY;
		snprintf(fs->probes[i].why, sizeof(fs->probes[i].why),
			 "fsession: the programs did not load: %s", strerror(-err));
	}
	vlog("note: the fsession programs did not load (%s): using fentry", strerror(-err));
	return true;
}

/*
 * The mmu_lock table, to free an exited VM's slots (threads.c). Without it
 * the table can only fill up, and contention_begin then checks every rwlock
 * the slow way: slower, not wrong.
 */
static void map_lock_table(struct faults_source *fs)
{
	void *p = mmap(NULL, sizeof(struct kvmmmu_lock_table), PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(fs->skel->maps.mmu_locks), 0);

	fs->lock_table = p == MAP_FAILED ? NULL : p;
	if (!fs->lock_table)
		vlog("mmu_lock table: mmap: %s", strerror(errno));
}

/* The faults object's programs, planned for the choices so far; 0 or -errno (said). */
static int open_faults(struct faults_source *fs, const enum attach_kind func_kind[FAULTS_N_FUNC],
		       const bool raw_only[FAULTS_N_TP])
{
	__u32 ring; /* the slow-fault ring's bytes: --stack's records are 512 bytes longer */
	int err;

	fs->skel = faults_bpf__open();
	if (!fs->skel) {
		err = -errno;
		elog("cannot open the BPF object: %s", strerror(-err));
		log_libbpf_excerpt();
		return err;
	}
	faults_plan(fs, func_kind, raw_only);
	thread_maps_size(&fs->sizes, fs->skel->maps.thread_stats);
	bpf_map__set_max_entries(fs->skel->maps.seen_procs, fs->sizes.max_threads);
	bpf_map__set_max_entries(fs->skel->maps.region_faults, fs->opts->region_shift ? 16384 : 1);
	/*
	 * A page when unused; with --slower room for 7000 records between two
	 * drains, and for 6000 of --stack's (each with 512 bytes of stack)
	 */
	ring = fs->opts->slow_stacks ? 1 << 22 : fs->opts->slower_ns ? 1 << 20 : 0;
	bpf_map__set_max_entries(fs->skel->maps.slow_faults,
				 ring ? ring : (__u32)sysconf(_SC_PAGESIZE));
	/* --stack: two stacks a thread (512 bytes each), made as they are first needed */
	bpf_map__set_max_entries(fs->skel->maps.wait_stacks,
				 fs->opts->slow_stacks ? fs->sizes.max_threads : 1);
	/* a program with a way around its failure to load is watched */
	for (size_t i = 0; i < FAULTS_N_FUNC + FAULTS_N_TP; i++) {
		struct probe_progs pp = faults_probe_progs(fs, i);

		if (i < FAULTS_N_FUNC ? func_kind[i] == ATTACH_FENTRY
				      : !raw_only[i - FAULTS_N_FUNC]) {
			err = load_watch_add(&fs->watch, &pp);
			if (err)
				return err;
		}
	}
	return 0;
}

static void close_faults(struct faults_source *fs)
{
	attach_links_destroy(&fs->links);
	faults_session_close(fs);
	faults_bpf__destroy(fs->skel);
	fs->skel = NULL;
	load_watch_free(&fs->watch);
}

void faults_source_arm(struct faults_source *fs)
{
	fs->skel->bss->armed = true;
}

int faults_source_trace_pid(struct faults_source *fs, int pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(fs->skel->maps.traced_pids), &key, &one, BPF_ANY))
		return -errno;
	return 0;
}

void faults_source_prog_info(const struct faults_source *fs, struct prog_info_sum *sum)
{
	prog_info_add(fs->skel ? fs->skel->obj : NULL, sum);
	prog_info_add(faults_session_object(fs), sum);
}

__u64 faults_source_prog_missed(const struct faults_source *fs)
{
	struct prog_info_sum sum = {};

	faults_source_prog_info(fs, &sum);
	return sum.recursion_misses;
}

int faults_source_open(struct faults_source *fs, const struct source_env *env,
		       struct threads *threads)
{
	enum attach_kind func_kind[FAULTS_N_FUNC];
	bool raw_only[FAULTS_N_TP] = {}, all_other_ways = false;
	int err, attempt;

	memset(fs, 0, sizeof(*fs));
	fs->opts = env->opts;
	snprintf(fs->memslot_off_why, sizeof(fs->memslot_off_why), "off: %s",
		 fs->opts->memslot_option ? fs->opts->memslot_option : "--metric memslot");
	snprintf(fs->phases_off_why, sizeof(fs->phases_off_why), "off: %s",
		 fs->opts->phases_option ? fs->opts->phases_option : "--metric phases");
	fs->engine = env->engine;
	fs->sizes = env->sizes;
	fs->threads = threads;
	err = decode_ret_pf(fs);
	if (err) {
		elog("cannot decode RET_PF_* values: no RET_PF_ enumerators in BTF and no "
		     "usable kvmmmu:fast_page_fault format");
		return err;
	}
	fs->has_pf_fast = kernel_btf_kvm_has_member(&fs->engine->kb, "kvm_vcpu_stat", "pf_fast");
	{
		/* every name any object asks kallsyms about, in one pass */
		const char *names[FAULTS_N_FUNC + 4];
		size_t n = 0;

		for (size_t i = 0; i < FAULTS_N_FUNC; i++)
			names[n++] = faults_functions[i].func;
		names[n++] = "kvm_mmu_load";
		names[n++] = "kvm_mmu_free_roots";
		names[n++] = "queued_write_lock_slowpath";
		names[n++] = "fast_page_fault";
		ksym_prefetch(names, n);
	}
	for (size_t i = 0; i < FAULTS_N_FUNC; i++) {
		char *why = fs->probes[i].why;

		if (!faults_function_wanted(fs, i, func_kind, why, sizeof(fs->probes[i].why))) {
			func_kind[i] = ATTACH_NONE;
			continue;
		}
		func_kind[i] = attach_choose_function(fs->engine, faults_functions[i].func, why,
						      sizeof(fs->probes[i].why));
		if (func_kind[i] == ATTACH_FENTRY)
			func_kind[i] = attach_check_prototype(fs->engine, faults_functions[i].func,
							      faults_functions[i].ret_arg, why,
							      sizeof(fs->probes[i].why));
		/* fsession before fentry, where one program can have both ends */
		if (func_kind[i] == ATTACH_FENTRY && fs->opts->mode != PROBE_MODE_FENTRY &&
		    faults_session_fits(fs, i) &&
		    attach_fsession_usable(fs->engine, faults_functions[i].func, why,
					   sizeof(fs->probes[i].why)))
			func_kind[i] = ATTACH_FSESSION;
	}
	err = check_forced_mode(fs, func_kind);
	if (err)
		return err;

	/* An attach that fails after load changes what the programs must do: reload without it. */
	for (attempt = 0; attempt < 1 + (int)(FAULTS_N_FUNC + FAULTS_N_TP); attempt++) {
		bool retry = false;

		log_libbpf_forget();
		err = open_faults(fs, func_kind, raw_only);
		if (err && !fs->skel)
			return err; /* said */
		if (!err)
			err = faults_bpf__load(fs->skel);
		if (!err && session_failed(fs, faults_session_load(fs, func_kind), func_kind)) {
			close_faults(fs);
			err = check_forced_mode(fs, func_kind);
			if (err)
				return err;
			continue;
		}
		if (err && err != -EPERM &&
		    (load_another_way(fs, load_watch_failed(&fs->watch), func_kind, raw_only) ||
		     every_other_way(fs, &all_other_ways, func_kind, raw_only))) {
			close_faults(fs);
			err = check_forced_mode(fs, func_kind);
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
			close_faults(fs);
			return err;
		}
		load_watch_free(&fs->watch);
		/* the filter holds its processes before any program runs: none is missed */
		for (size_t i = 0; fs->opts->filter_pids && i < fs->opts->n_pids; i++) {
			err = faults_source_trace_pid(fs, fs->opts->pids[i]);
			if (err) {
				elog("cannot add pid %d to the BPF filter: %s", fs->opts->pids[i],
				     strerror(-err));
				close_faults(fs);
				return err;
			}
		}
		for (size_t i = 0; i < fs->n_probes && !retry; i++) {
			struct probe_status *p = &fs->probes[i];
			struct probe_progs pp = faults_probe_progs(fs, i);

			if (p->kind == ATTACH_NONE)
				continue;
			if (attach_probe(fs->engine, &fs->links, &pp, 1, p) && i < FAULTS_N_FUNC) {
				func_kind[i] = ATTACH_NONE;
				retry = true;
				/* another name of the same function: it may attach where this did
				 * not */
				if (i + 1 < FAULTS_N_FUNC && faults_functions[i + 1].alternative)
					func_kind[i + 1] = attach_choose_function(
						fs->engine, faults_functions[i + 1].func,
						fs->probes[i + 1].why,
						sizeof(fs->probes[i + 1].why));
			}
		}
		if (!retry) {
			map_lock_table(fs);
			return 0;
		}
		err = check_forced_mode(fs, func_kind);
		close_faults(fs);
		if (err)
			return err;
	}
	return -ELOOP;
}

void faults_source_shared(const struct faults_source *fs, struct shared_maps *maps)
{
	maps->traced_pids = bpf_map__fd(fs->skel->maps.traced_pids);
	maps->thread_stats = bpf_map__fd(fs->skel->maps.thread_stats);
	maps->thread_news = bpf_map__fd(fs->skel->maps.thread_news);
	maps->seen_procs = bpf_map__fd(fs->skel->maps.seen_procs);
	maps->mmu_locks = bpf_map__fd(fs->skel->maps.mmu_locks);
	maps->vm_births = bpf_map__fd(fs->skel->maps.vm_births);
}

const struct kvmmmu_health *faults_source_health(const struct faults_source *fs)
{
	return &fs->skel->bss->health;
}

void faults_source_close(struct faults_source *fs)
{
	if (fs->lock_table)
		munmap(fs->lock_table, sizeof(*fs->lock_table));
	close_faults(fs);
	regions_free(&fs->regions_done);
	regions_free(&fs->storms);
	slow_faults_free(&fs->slow);
	kernel_symbols_free(fs->ksyms);
	free(fs->retired);
	ret_pf_free(&fs->ret_pf);
	memset(fs, 0, sizeof(*fs));
}
