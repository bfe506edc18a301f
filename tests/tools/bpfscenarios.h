/* SPDX-License-Identifier: GPL-2.0 */
/* What bpfscenarios' files share: running a program, the verdicts, the faults object. */
#ifndef KVMMMU_BPFSCENARIOS_H
#define KVMMMU_BPFSCENARIOS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

#include "kvmmmu.h"
#include "faults.skel.h"

/* kvm:kvm_page_fault as 6.1+ gives it: (vcpu, address, error_code) */
#define PF_EXIT_ERROR_CODE_ARG 2
#define PFERR_WRITE (1ULL << 1)
#define PFERR_GUEST_FINAL (1ULL << 32) /* an NPF: the address is a GPA */

/* RET_PF_* as 6.1..6.12 number them */
#define RET_PF_RETRY 1
#define RET_PF_EMULATE 2
#define RET_PF_FIXED 4
#define RET_PF_SPURIOUS 5

/* bpfscenarios.c: running programs, the verdicts, the faults object */
int run_args(struct bpf_program *prog, __u64 *args, size_t n);
int run3(struct bpf_program *prog, __u64 a0, __u64 a1, __u64 a2);
int run_done_at(struct bpf_program *prog, __u64 ret, __u64 start_ns, __u64 goal_level, __u64 fast);
int run_done(struct bpf_program *prog, __u64 ret, __u64 start_ns);
void expect(const char *name, bool ok, const char *what);
__attribute__((format(printf, 3, 4))) void expectf(const char *name, bool ok, const char *fmt, ...);
int put_fault_state(int thread_stats_fd, const struct kvmmmu_fault_state *st);
int setup_faults_on(struct faults_bpf **out, __u32 sample_every, bool vmx_ept);
int setup_faults(struct faults_bpf **out, __u32 sample_every);
void thread_figures(struct faults_bpf *skel, struct kvmmmu_thread_stats *s);

/* The groups of cases, in the order main() runs them; each returns -1 if it cannot run. */
int lock_scenarios(void);	 /* bpfscenarios_lock.c */
int in_fault_scenarios(void);	 /* bpfscenarios_lock.c */
int exit_walk_scenarios(void);	 /* bpfscenarios_model.c */
int reload_lock_scenarios(void); /* bpfscenarios_lock.c */
int sample_scenarios(void);	 /* bpfscenarios_model.c */
int ept_scenarios(void);	 /* bpfscenarios_model.c */
int fault_scenarios(void);	 /* bpfscenarios_kmem.c */

#endif
