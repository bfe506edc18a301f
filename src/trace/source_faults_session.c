// SPDX-License-Identifier: GPL-2.0
/*
 * The faults source's fsession programs (7.0): one program a function for
 * its entry and its exit, one link. They are built into a second object,
 * bpf/faults_session.bpf.c (the faults object again, with them), because
 * libbpf 1.1 refuses a whole object whose kfunc prototypes the kernel does
 * not match, and the session kfuncs changed theirs in 7.0. That object
 * runs on the faults object's maps, every one of them reused by fd (.bss
 * and .rodata too): one state, whichever program counts into it.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

#include "source_faults.h" /* first: the skeletons need kvmmmu.h's types */
#include "faults.skel.h"
#include "faults_session.skel.h"
#include "log.h"

#define SESSION_PROG(func)                                                                         \
	{                                                                                          \
#func, SKEL_PROG(faults_session_bpf, func##_fsession)                              \
	}

/* The functions whose entry and exit the faults object probes, each with its program. */
static const struct {
	const char *func;
	size_t prog;
} session_progs[] = {
	SESSION_PROG(kvm_mmu_page_fault),
	SESSION_PROG(kvm_tdp_page_fault),
	SESSION_PROG(paging64_page_fault),
	SESSION_PROG(paging32_page_fault),
	SESSION_PROG(ept_page_fault),
	SESSION_PROG(nonpaging_page_fault),
	SESSION_PROG(kvm_vcpu_gfn_to_memslot),
	SESSION_PROG(paging64_walk_addr_generic),
	SESSION_PROG(paging32_walk_addr_generic),
	SESSION_PROG(ept_walk_addr_generic),
	SESSION_PROG(kvm_mmu_faultin_pfn),
	SESSION_PROG(kvm_faultin_pfn),
};

static size_t session_prog_offset(size_t i)
{
	for (size_t k = 0; k < sizeof(session_progs) / sizeof(session_progs[0]); k++)
		if (!strcmp(session_progs[k].func, faults_functions[i].func))
			return session_progs[k].prog;
	return 0;
}

bool faults_session_fits(const struct faults_source *fs, size_t i)
{
	return session_prog_offset(i) && faults_function_both_ends(fs, i);
}

struct bpf_program *faults_session_prog(const struct faults_source *fs, size_t i)
{
	size_t off = i < FAULTS_N_FUNC ? session_prog_offset(i) : 0;

	if (!fs->session || !off)
		return NULL;
	return *(struct bpf_program **)((char *)fs->session + off);
}

/*
 * Every map of the session object is the faults object's, by name: the
 * two are built from one source, so their global data has one layout;
 * a size that differs says they were not, and nothing is shared.
 */
static int share_maps(struct faults_source *fs)
{
	struct bpf_map *m;

	bpf_object__for_each_map (m, fs->session->obj) {
		const char *name = bpf_map__name(m), *dot = strchr(name, '.');
		/* "faults_s.bss" is "faults_b.bss": libbpf finds internal maps by ".bss" */
		const struct bpf_map *own = bpf_object__find_map_by_name(
			fs->skel->obj, bpf_map__is_internal(m) && dot ? dot : name);
		int err;

		if (!own || bpf_map__value_size(own) != bpf_map__value_size(m)) {
			vlog("fsession: map %s is not the faults object's", bpf_map__name(m));
			return -EINVAL;
		}
		err = bpf_map__reuse_fd(m, bpf_map__fd(own));
		if (err)
			return err;
	}
	return 0;
}

int faults_session_load(struct faults_source *fs, const enum attach_kind func_kind[FAULTS_N_FUNC])
{
	struct bpf_program *p;
	bool any = false;
	int err;

	for (size_t i = 0; i < FAULTS_N_FUNC; i++)
		any |= func_kind[i] == ATTACH_FSESSION;
	if (!any)
		return 0;
	fs->session = faults_session_bpf__open();
	if (!fs->session)
		return -errno;
	bpf_object__for_each_program (p, fs->session->obj)
		bpf_program__set_autoload(p, false);
	for (size_t i = 0; i < FAULTS_N_FUNC; i++) {
		if (func_kind[i] != ATTACH_FSESSION)
			continue;
		p = faults_session_prog(fs, i);
		bpf_program__set_autoload(p, true);
		attach_set_fsession(p, fs->engine);
	}
	err = share_maps(fs);
	if (!err)
		err = faults_session_bpf__load(fs->session);
	if (err) {
		faults_session_close(fs);
		return err;
	}
	return 0;
}

void faults_session_close(struct faults_source *fs)
{
	faults_session_bpf__destroy(fs->session);
	fs->session = NULL;
}

const struct bpf_object *faults_session_object(const struct faults_source *fs)
{
	return fs->session ? fs->session->obj : NULL;
}
