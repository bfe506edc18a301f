/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmmmu-check: what this host offers for tracing the KVM MMU and what
 * kvmmmu will use. Each section prints aligned "item verdict detail" lines
 * and records what the final verdict needs.
 */
#ifndef KVMMMU_CHECK_H
#define KVMMMU_CHECK_H

#include <stdbool.h>

#include "collector.h"
#include "kernel_btf.h"

struct check_env {
	enum probe_mode mode;
	bool verbose;
	const char *validate; /* --validate PID|NAME */
	double validate_secs; /* how long to trace for it */
};

/* What the final verdict is made of; the sections fill it in. */
struct check_state {
	enum probe_mode mode;
	struct kernel_btf kb; /* loaded by the kernel section */
	bool btf;	      /* vmlinux BTF present */
	bool ret_pf;	      /* RET_PF_* decoded */
	bool ret_pf_conflict; /* BTF and the tracefs format disagree */
	struct collector c;
	bool collector_open;
	int collector_err;
};

/* args.c: parses argv, or exits with status 2 after one line on stderr. */
void check_parse_args(int argc, char **argv, struct check_env *env);

/* report.c */
void report_heading(const char *title);
/* "  LABEL  VERDICT  DETAIL"; DETAIL may be NULL. */
void report_item(const char *label, const char *verdict, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A FAIL line; counted by report_failures(). */
void report_fail(const char *label, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int report_failures(void);
const char *yes_no(bool b);

/* kernel.c: release, BTF, KVM module layout and parameters; loads st->kb. */
void check_kernel(struct check_state *st);
/* kernel.c: lock:contention_* and struct kvm's mmu_lock member from BTF. */
void check_mmu_lock(struct check_state *st);

/* kvm_probe.c: /dev/kvm, KVM_CAP_BINARY_STATS_FD and a real KVM_GET_STATS_FD. */
void check_dev_kvm(void);

/* tracing.c: opens the real collector in ENV's probe mode, tracing no process. */
/* Opens the collector; with PIDS (N of them) only they are counted, from the attach on. */
void check_open_collector(struct check_state *st, const struct check_env *env, const int *pids,
			  size_t n);
/* tracing.c: the report sections that use the collector's choices. */
void check_tracepoints(struct check_state *st);
void check_functions(struct check_state *st);
void check_ret_pf(struct check_state *st);
/* The changes kernel-patches/ carries: which of them the running kernel has. */
void check_carried(struct check_state *st);
/* tracing.c: one tracepoint's line: present in tracefs, tp_btf possible, what kvmmmu attaches. */
/* PART: the part of kvmmmu-hist that attaches it when kvmmmu-check does not (NULL: none). */
void report_tracepoint(struct check_state *st, const char *group, const char *event,
		       const char *part);

/* validate.c: --validate; returns the exit status. */
int check_validate(const struct check_env *env);

#endif
