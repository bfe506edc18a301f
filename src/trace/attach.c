// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "array.h"
#include "ksyms.h"
#include "log.h"

const char *const probe_mode_names[N_PROBE_MODES] = {
	[PROBE_MODE_AUTO] = "auto",
	[PROBE_MODE_FSESSION] = "fsession",
	[PROBE_MODE_FENTRY] = "fentry",
	[PROBE_MODE_KPROBE] = "kprobe",
	[PROBE_MODE_TRACEPOINT] = "tracepoint",
};

int probe_mode_parse(const char *s, enum probe_mode *mode)
{
	for (int i = 0; i < N_PROBE_MODES; i++) {
		if (!strcmp(s, probe_mode_names[i])) {
			*mode = (enum probe_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

int probe_mode_resolve(enum probe_mode asked, enum probe_mode *mode, const char **origin)
{
	const char *env = getenv("KVMMMU_PROBE_MODE");

	*mode = asked;
	if (origin)
		*origin = "--probe-mode ";
	if (asked != PROBE_MODE_AUTO || !env || !*env)
		return 0;
	if (probe_mode_parse(env, mode)) {
		elog("KVMMMU_PROBE_MODE '%s': expected auto, fsession, fentry, kprobe or "
		     "tracepoint",
		     env);
		return -EINVAL;
	}
	if (origin)
		*origin = "KVMMMU_PROBE_MODE=";
	return 0;
}

int attach_engine_open(struct attach_engine *e, enum probe_mode mode, const char *mode_origin,
		       unsigned int kretprobe_maxactive)
{
	memset(e, 0, sizeof(*e));
	e->mode = mode;
	e->mode_origin = mode_origin;
	kprobes_init(&e->kprobes, kretprobe_maxactive);
	return kernel_btf_load(&e->kb);
}

void attach_engine_settled(struct attach_engine *e)
{
	kernel_btf_free(&e->kb);
}

void attach_engine_close(struct attach_engine *e)
{
	kprobes_close(&e->kprobes);
	kernel_btf_free(&e->kb);
}

/*
 * Loads and attaches a do-nothing program of TYPE (fentry, fsession): BTF
 * and kallsyms say a function could be traced, only the kernel says
 * whether it may (lockdown, BPF LSMs and missing trampolines all refuse
 * here). WHY starts with WORD.
 */
static int try_tracing(struct attach_engine *e, const char *func, enum bpf_attach_type type,
		       const char *word, char *why, size_t len)
{
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type);
	int btf_id, mod_fd = -1, fd, link, err = 0;
	bool in_module;

	if (!kernel_btf_find_func(&e->kb, func, &btf_id, &in_module)) {
		snprintf(why, len, "%s: no BTF FUNC record", word);
		return -ENOENT;
	}
	if (in_module) {
		mod_fd = kernel_btf_kvm_fd(&e->kb);
		if (mod_fd < 0) {
			snprintf(why, len, "%s: kvm module BTF not loadable: %s", word,
				 strerror(-mod_fd));
			return mod_fd;
		}
		opts.attach_btf_obj_fd = mod_fd;
	}
	opts.attach_btf_id = btf_id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "kvmmmu_try", "GPL", insns, 2, &opts);
	if (fd < 0) {
		err = -errno;
		snprintf(why, len, "%s: load refused: %s%s", word, strerror(-err),
			 err == -EPERM ? " (lockdown or a BPF LSM)" : "");
	} else {
		link = bpf_raw_tracepoint_open(NULL, fd);
		if (link < 0) {
			err = -errno;
			snprintf(why, len, "%s: attach refused: %s", word, strerror(-err));
		} else {
			close(link);
		}
		close(fd);
	}
	if (mod_fd >= 0)
		close(mod_fd);
	return err;
}

/*
 * BPF_TRACE_FSESSION's value in this kernel's enum bpf_attach_type, with
 * bpf_session_is_return() taking the context as 7.0 made it (6.10-6.18's
 * took nothing, for kprobe sessions): -ENOENT where either is missing.
 * Looked up once.
 */
static int fsession_attach_type(struct attach_engine *e)
{
	const struct btf_type *t;
	int id;

	if (e->fsession_type)
		return e->fsession_type;
	e->fsession_type = -ENOENT;
	if (!e->kb.vmlinux || kernel_btf_func_params(&e->kb, "bpf_session_is_return") != 1)
		return e->fsession_type;
	id = btf__find_by_name_kind(e->kb.vmlinux, "bpf_attach_type", BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(e->kb.vmlinux, id) : NULL;
	for (int i = 0; t && i < btf_vlen(t); i++) {
		const struct btf_enum *v = btf_enum(t) + i;

		if (!strcmp(btf__name_by_offset(e->kb.vmlinux, v->name_off), "BPF_TRACE_FSESSION"))
			e->fsession_type = v->val;
	}
	return e->fsession_type;
}

bool attach_fsession_usable(struct attach_engine *e, const char *func, char *why, size_t len)
{
	int type = fsession_attach_type(e);
	char trial_why[160];

	if (type < 0) {
		snprintf(why, len, "fsession: not in this kernel (7.0 and later)");
		return false;
	}
	if (try_tracing(e, func, (enum bpf_attach_type)type, "fsession", trial_why,
			sizeof(trial_why))) {
		snprintf(why, len, "%s", trial_why);
		return false;
	}
	return true;
}

void attach_set_fsession(struct bpf_program *prog, const struct attach_engine *e)
{
	bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)e->fsession_type);
}

bool attach_kprobe_fallback(const struct attach_engine *e)
{
	return (e->mode == PROBE_MODE_AUTO || e->mode == PROBE_MODE_KPROBE) && attach_kprobe_pmu();
}

bool attach_kprobe_pmu(void)
{
	return access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0;
}

static bool unprobed_by_env(const char *func)
{
	const char *list = getenv("KVMMMU_UNPROBED"), *p;
	size_t n = strlen(func);

	for (p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, func, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

enum attach_kind attach_choose_function(struct attach_engine *e, const char *func, char *why,
					size_t len)
{
	enum ksym_state ks = ksym_lookup(NULL, func);
	char fentry_why[160] = "";

	if (e->mode == PROBE_MODE_TRACEPOINT) {
		snprintf(why, len, "not tried (%stracepoint)", e->mode_origin);
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
	if (e->mode != PROBE_MODE_KPROBE) {
		if (!try_tracing(e, func, BPF_TRACE_FENTRY, "fentry", fentry_why,
				 sizeof(fentry_why)))
			return ATTACH_FENTRY;
		if (e->mode != PROBE_MODE_AUTO) {
			snprintf(why, len, "%s", fentry_why);
			return ATTACH_NONE;
		}
	}
	if (!attach_kprobe_pmu()) {
		snprintf(why, len, "%s%skprobe: no kprobe PMU in this kernel", fentry_why,
			 *fentry_why ? "; " : "");
		return ATTACH_NONE;
	}
	return ATTACH_KPROBE;
}

enum attach_kind attach_check_prototype(struct attach_engine *e, const char *func, int ret_arg,
					char *why, size_t len)
{
	int params;

	if (ret_arg < 0)
		return ATTACH_FENTRY;
	params = kernel_btf_func_params(&e->kb, func);
	if (params == ret_arg)
		return ATTACH_FENTRY;
	snprintf(why, len, "fentry: %s takes %d arguments here, kvmmmu's fexit expects %d", func,
		 params, ret_arg);
	if (!attach_kprobe_fallback(e))
		return ATTACH_NONE;
	return ATTACH_KPROBE;
}

bool attach_tp_btf_usable(struct attach_engine *e, const char *event)
{
	return kernel_btf_has_tp_btf(&e->kb, event);
}

void probe_progs_of(struct probe_progs *pp, const void *skel, const size_t offs[N_PROG_SLOTS])
{
	for (int s = 0; s < N_PROG_SLOTS; s++)
		pp->prog[s] = offs[s] ? *(struct bpf_program *const *)((const char *)skel + offs[s])
				      : NULL;
}

void probe_progs_plan(const struct probe_progs *pp, enum attach_kind kind)
{
	static const enum attach_kind slot_kind[N_PROG_SLOTS] = {
		[SLOT_FENTRY] = ATTACH_FENTRY,	   [SLOT_FEXIT] = ATTACH_FENTRY,
		[SLOT_KPROBE] = ATTACH_KPROBE,	   [SLOT_KRETPROBE] = ATTACH_KPROBE,
		[SLOT_TP_BTF] = ATTACH_TP_BTF,	   [SLOT_RAW_TP] = ATTACH_RAW_TP,
		[SLOT_FSESSION] = ATTACH_FSESSION,
	};

	for (int s = 0; s < N_PROG_SLOTS; s++)
		if (pp->prog[s])
			bpf_program__set_autoload(pp->prog[s], slot_kind[s] == kind);
}

bool probe_progs_has(const struct probe_progs *pp, const struct bpf_program *bp)
{
	for (int s = 0; s < N_PROG_SLOTS; s++)
		if (bp && pp->prog[s] == bp)
			return true;
	return false;
}

static const char *const slot_names[N_PROG_SLOTS] = {"fentry", "fexit",	 "kprobe",  "kretprobe",
						     "tp_btf", "raw_tp", "fsession"};

int attach_probe(struct attach_engine *e, struct attach_links *l, const struct probe_progs *pp,
		 size_t n, struct probe_status *p)
{
	for (size_t i = 0; i < n; i++) {
		for (int s = 0; s < N_PROG_SLOTS; s++) {
			struct bpf_program *bp = pp[i].prog[s];
			struct bpf_link *link, **v;
			int err;

			if (!bp || !bpf_program__autoload(bp))
				continue;
			link = s == SLOT_KPROBE || s == SLOT_KRETPROBE
				       ? kprobes_attach(&e->kprobes, bp)
				       : bpf_program__attach(bp);
			err = link ? 0 : -errno;
			v = link ? array_grow(l->v, l->n + 1, &l->cap, sizeof(*l->v)) : NULL;
			if (link && !v) {
				bpf_link__destroy(link);
				err = -ENOMEM;
			}
			if (err) {
				p->kind = ATTACH_NONE;
				snprintf(p->why, sizeof(p->why), "%s: attach failed: %s",
					 slot_names[s], strerror(-err));
				return err;
			}
			l->v = v;
			l->v[l->n++] = link;
		}
	}
	return 0;
}

void attach_links_destroy(struct attach_links *l)
{
	while (l->n)
		bpf_link__destroy(l->v[--l->n]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * A verifier log's last lines say what it refused: room for them, not for
 * all of it (the kernel keeps the end from 6.4 on, the beginning before).
 */
#define WATCH_LOG_SIZE (32 * 1024)

int load_watch_add(struct load_watch *w, const struct probe_progs *pp)
{
	for (int s = 0; s < N_PROG_SLOTS; s++) {
		struct bpf_program *bp = pp->prog[s];

		if (!bp || !bpf_program__autoload(bp))
			continue;
		if (w->n == LOAD_WATCH_MAX)
			return -E2BIG;
		w->log[w->n] = calloc(1, WATCH_LOG_SIZE);
		if (!w->log[w->n])
			return -ENOMEM;
		bpf_program__set_log_buf(bp, w->log[w->n], WATCH_LOG_SIZE);
		w->prog[w->n++] = bp;
	}
	return 0;
}

struct bpf_program *load_watch_failed(const struct load_watch *w)
{
	for (size_t i = 0; i < w->n; i++) {
		if (!w->log[i][0])
			continue;
		/* a recovered failure: the log only for -v (its end says why) */
		if (log_verbose) {
			size_t len = strnlen(w->log[i], WATCH_LOG_SIZE);

			vlog("%s: the kernel refused it; its verifier log ends:\n%s",
			     bpf_program__name(w->prog[i]),
			     w->log[i] + (len > 2048 ? len - 2048 : 0));
		}
		return w->prog[i];
	}
	return NULL;
}

void load_watch_free(struct load_watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->log[i]);
	memset(w, 0, sizeof(*w));
}
