/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attach engine: how each probe point is had on this kernel, for every
 * BPF object. A function gets fentry (BTF, kallsyms, then a trial attach:
 * only the kernel says whether it may), else a kprobe, else nothing, with
 * the reason; a tracepoint gets tp_btf where BTF describes it, else raw_tp.
 * Objects name their programs by skeleton handle (checked by the compiler),
 * never by string. A program that fails to load is found from its own log
 * buffer, not from libbpf's messages, so that its object loads another way.
 */
#ifndef KVMMMU_ATTACH_H
#define KVMMMU_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel_btf.h"
#include "kprobes.h"
#include "probe_status.h"

struct bpf_link;
struct bpf_program;

enum probe_mode {
	PROBE_MODE_AUTO,
	PROBE_MODE_FSESSION,
	PROBE_MODE_FENTRY,
	PROBE_MODE_KPROBE,
	PROBE_MODE_TRACEPOINT,
	N_PROBE_MODES,
};

/* "auto", "fsession", "fentry", "kprobe", "tracepoint": --probe-mode's words, everywhere. */
extern const char *const probe_mode_names[N_PROBE_MODES];
int probe_mode_parse(const char *s, enum probe_mode *mode);
/*
 * The mode to use where --probe-mode said ASKED: KVMMMU_PROBE_MODE where it
 * said nothing (auto), for a host's or a test pass's default. *ORIGIN, if
 * not NULL, names what chose it, to print before the mode's name: "--probe-mode "
 * or "KVMMMU_PROBE_MODE=".
 * -EINVAL, said in one line, where the variable is no mode.
 */
int probe_mode_resolve(enum probe_mode asked, enum probe_mode *mode, const char **origin);

struct attach_engine {
	enum probe_mode mode;
	const char *mode_origin; /* "--probe-mode " or "KVMMMU_PROBE_MODE=" */
	struct kernel_btf kb;	 /* for choosing and loading; freed once all is attached */
	struct kprobes kprobes;	 /* every object's kprobes and kretprobes */
	int fsession_type;	 /* BPF_TRACE_FSESSION here; 0: not looked up, <0: none */
};

/* Loads the kernel's BTF (0, or -errno: kvmmmu needs it) and readies kprobe events. */
int attach_engine_open(struct attach_engine *e, enum probe_mode mode, const char *mode_origin,
		       unsigned int kretprobe_maxactive);
/* Every object is attached: the BTF (tens of MiB) goes; the kprobe events stay. */
void attach_engine_settled(struct attach_engine *e);
/* Removes the kprobe events: every link must be destroyed first. */
void attach_engine_close(struct attach_engine *e);

/*
 * fentry, kprobe or nothing for FUNC in this kernel and probe mode: BTF,
 * an exact kallsyms name, then a trial fentry attach; WHY says what is not
 * used. KVMMMU_UNPROBED=FUNC[,...] makes FUNC unprobeable (tests).
 */
enum attach_kind attach_choose_function(struct attach_engine *e, const char *func, char *why,
					size_t len);
/*
 * Prototype drift: an fexit program that reads the return value after
 * RET_ARG arguments reads an argument where FUNC takes another number
 * (the verifier would not notice). ATTACH_FENTRY when it matches (or
 * RET_ARG < 0), else the kretprobe where the mode allows it, or nothing.
 */
enum attach_kind attach_check_prototype(struct attach_engine *e, const char *func, int ret_arg,
					char *why, size_t len);
/*
 * Whether FUNC (fentry already chosen for it) can have one fsession program
 * for its entry and exit: BTF_TRACE_FSESSION in the kernel's BTF (7.0), the
 * session kfuncs with 7.0's prototype, then a trial attach. WHY says what
 * is not used.
 */
bool attach_fsession_usable(struct attach_engine *e, const char *func, char *why, size_t len);
/* Makes PROG (SEC("fentry/...") in the object) an fsession program: attach_fsession_usable() first.
 */
void attach_set_fsession(struct bpf_program *prog, const struct attach_engine *e);
/* Whether a function fentry cannot have may have kprobes instead (auto or kprobe mode). */
bool attach_kprobe_fallback(const struct attach_engine *e);
/* Whether this kernel has a kprobe PMU (kprobes can be had at all). */
bool attach_kprobe_pmu(void);
/* Whether tracepoint EVENT can have a tp_btf program (else raw_tp). */
bool attach_tp_btf_usable(struct attach_engine *e, const char *event);

/* A probe point's programs in its object, by the way each attaches. */
enum prog_slot {
	SLOT_FENTRY,
	SLOT_FEXIT,
	SLOT_KPROBE,
	SLOT_KRETPROBE,
	SLOT_TP_BTF,
	SLOT_RAW_TP,
	SLOT_FSESSION,
	N_PROG_SLOTS,
};
struct probe_progs {
	struct bpf_program *prog[N_PROG_SLOTS]; /* NULL: no such program */
};

/*
 * Offsets of a skeleton's program handles, for tables of probe points:
 * SKEL_PROG(faults_bpf, kvm_mmu_page_fault_fentry). 0: none.
 */
#define SKEL_PROG(skel, name) offsetof(struct skel, progs.name)
/* The handles of SKEL at the offsets OFFS[N_PROG_SLOTS]. */
void probe_progs_of(struct probe_progs *pp, const void *skel, const size_t offs[N_PROG_SLOTS]);
/* Loads the programs of PP that KIND attaches, and none of the others. */
void probe_progs_plan(const struct probe_progs *pp, enum attach_kind kind);
/* Whether BP is one of PP's. */
bool probe_progs_has(const struct probe_progs *pp, const struct bpf_program *bp);

/* Links an object keeps; destroyed together. */
struct attach_links {
	struct bpf_link **v;
	size_t n, cap;
};
/*
 * Attaches every loaded program of PP (N of them), kprobes through the
 * engine's tracefs events; on failure P's kind becomes ATTACH_NONE and its
 * why says so. 0 or -errno.
 */
int attach_probe(struct attach_engine *e, struct attach_links *l, const struct probe_progs *pp,
		 size_t n, struct probe_status *p);
void attach_links_destroy(struct attach_links *l);

/*
 * Programs whose failure to load has a way around it (tp_btf to raw_tp,
 * fentry to kprobes): each gets a log buffer of its own, so that after a
 * failed load the one the kernel refused is the one whose log has text.
 * libbpf prints no log it was given a buffer for: -v shows it here.
 */
#define LOAD_WATCH_MAX 48
struct load_watch {
	struct bpf_program *prog[LOAD_WATCH_MAX];
	char *log[LOAD_WATCH_MAX];
	size_t n;
};
/* Watches every program of PP that is set to load; 0 or -ENOMEM / -E2BIG. */
int load_watch_add(struct load_watch *w, const struct probe_progs *pp);
/* After a failed load: the watched program the kernel refused, or NULL (no way around it). */
struct bpf_program *load_watch_failed(const struct load_watch *w);
/* Forgets the programs (a new open of the object has new ones) and frees the buffers. */
void load_watch_free(struct load_watch *w);

#endif
