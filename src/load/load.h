/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmmmu-load: a small VMM that generates a known KVM MMU fault load, in the
 * manner of the KVM selftests' dirty_log_perf_test.
 */
#ifndef KVMMMU_LOAD_H
#define KVMMMU_LOAD_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "csv.h"
#include "kvm_stats.h"

#define LOAD_PAGE_SIZE 4096ULL
#define LOAD_MAX_VCPUS 1024 /* a sanity bound below any KVM_CAP_MAX_VCPUS */
#define LOAD_PORT 0x4b4d    /* guest "out" to this port means "pass done" */

/*
 * Guest physical layout: slot 0 at GPA 0 holds the GDT, TSS, code and page
 * tables; slot 1 holds only the test memory, so that dirty logging (which is
 * enabled on slot 1 alone) covers exactly the pages the guest writes.
 */
#define SYS_SLOT 0
#define TEST_SLOT 1
#define TEST_GPA (4ULL << 30)	 /* long mode: above 4 GiB */
#define TEST_GPA_32 (1ULL << 30) /* 32-bit modes: below 4 GiB, with room for 2 GiB */
/* --mmio: reads of a guest-physical page no memslot backs, between slot 0 and the test memory */
#define MMIO_GPA (3ULL << 30)
#define TEST_MAX_32 (2ULL << 30)

/* How the guest runs, and so which of KVM's page-fault handlers takes its faults. */
enum guest_mode {
	GUEST_LONG,	 /* 64-bit long mode, 4-level paging: paging64_page_fault */
	GUEST_PAE,	 /* 32-bit protected mode, PAE paging: paging64_page_fault, PAE roots */
	GUEST_32BIT,	 /* 32-bit protected mode, 2-level paging, 4 MiB pages: paging32 */
	GUEST_NONPAGING, /* 32-bit protected mode, paging off: nonpaging_page_fault */
	GUEST_CR0WP,	 /* long mode at CPL0, CR0.WP off and on around every store */
};

static inline bool guest_mode_is_long(enum guest_mode mode)
{
	return mode == GUEST_LONG || mode == GUEST_CR0WP;
}

#define EXIT_USAGE 2

enum thread_names {
	THREAD_NAMES_QEMU,	  /* "CPU 0/KVM" */
	THREAD_NAMES_FIRECRACKER, /* "fc_vcpu 0" */
	THREAD_NAMES_PLAIN,	  /* the process name, as a VMM that names nothing */
};

/* --access: how the guest touches each page of the test memory (long mode) */
enum guest_access {
	ACCESS_WRITE, /* a store: write faults (the default) */
	ACCESS_READ,  /* a load: read faults */
	ACCESS_EXEC,  /* a jump into the page: instruction-fetch faults */
};

struct load_opts {
	unsigned int vcpus;
	uint64_t mem; /* bytes per vCPU; with shared, for all of them */
	bool shared;  /* every vCPU writes the same pages, at once */
	enum guest_mode mode;
	unsigned int passes;	   /* write passes without dirty logging, populate included */
	unsigned int dirty_iters;  /* 0: no dirty logging */
	unsigned int passes_after; /* write passes after dirty logging is off */
	double duration;	   /* seconds, 0: not timed */
	bool thp;
	bool no_stats_fds;	  /* open none: tools must find KVM's counters elsewhere */
	bool dirty_log_on_signal; /* write passes until SIGUSR1, then dirty logging */
	unsigned int reclaim_ms;  /* 0: no reclaim thread */
	bool uffd;		  /* test memory supplied through userfaultfd */
	bool gmem;		  /* test memory is a guest_memfd (mmap-able, shared) */
	unsigned int mmio_reads;  /* MMIO reads after each pass (long mode), 0: none */
	enum guest_access access; /* --access */
	const char *name;	  /* --name: for tools that read it from our command line */
	const char *csv_path;
	const char *label;
	enum thread_names thread_names;
	unsigned int vms; /* VMs made in turn, each destroyed before the next (default 1) */
	double linger;	  /* seconds the process lives on after its last VM is gone */
};

struct vm;

struct vcpu {
	struct vm *vm;
	int id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool started;
	uint64_t gpa;	     /* first GPA of this vCPU's region */
	uint64_t pages;	     /* 4 KiB pages in the region */
	uint64_t mmio_exits; /* KVM_EXIT_MMIO of --mmio's reads */
	struct kvm_stats stats;
	bool have_stats;
};

struct vm {
	int kvm_fd;
	int fd;
	size_t run_size;
	void *sys_mem;
	uint64_t sys_size;
	void *test_map; /* mmap()ed block, larger than test_mem for 2 MiB alignment */
	size_t test_map_len;
	void *test_mem;
	uint64_t test_size;
	uint64_t test_gpa; /* TEST_GPA, or TEST_GPA_32 in 32-bit guest modes */
	bool gmem;	   /* --gmem: test memory is the guest_memfd GMEM_FD, mapped */
	int gmem_fd;
	bool shared;		 /* every vCPU's region is the whole test memory */
	bool no_stats_fds;	 /* --no-stats-fds */
	unsigned int mmio_reads; /* --mmio */
	enum guest_access access;
	enum guest_mode mode;
	uint32_t test_flags; /* KVM_MEM_* flags currently set on TEST_SLOT */
	bool manual_protect; /* KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE is on */
	uint64_t *dirty_bitmap;
	unsigned int nr_vcpus;
	struct vcpu *vcpus;
	struct kvm_stats stats;
	bool have_stats;
};

/* main.c: where human-readable output goes (stderr when the CSV is on stdout). */
extern FILE *load_out;

/* args.c: 0 to run, 1 when --help or --version was served, -1 on a usage error (reported). */
int load_parse_args(int argc, char **argv, struct load_opts *o);

/* vm.c */
int kvm_open_dev(void);
int vm_create(struct vm *vm, int kvm_fd, const struct load_opts *o);
int vm_set_test_flags(struct vm *vm, uint32_t flags);
void vm_destroy(struct vm *vm);

/* guest.c */
uint64_t guest_sys_size(unsigned int nr_vcpus, uint64_t test_gpa, uint64_t test_size);
const char *guest_mode_name(enum guest_mode mode);
int guest_mode_parse(const char *s, enum guest_mode *mode);
void guest_build_memory(struct vm *vm);
struct kvm_cpuid2 *guest_supported_cpuid(int kvm_fd);
int guest_init_vcpu(struct vcpu *v, const struct kvm_cpuid2 *cpuid);
void guest_dump_vcpu(FILE *f, const struct vcpu *v);

/* gmem.c: --gmem's guest_memfd (refused in one line where KVM cannot map one) */
int gmem_alloc(struct vm *vm);
int gmem_set_slot(struct vm *vm);
void gmem_free(struct vm *vm);

/* dirty_log.c */
int dirty_log_setup(struct vm *vm);
int dirty_log_enable(struct vm *vm);
int dirty_log_disable(struct vm *vm);
int dirty_log_get(struct vm *vm, uint64_t *dirty_pages);
int dirty_log_clear(struct vm *vm);

/* run.c */
enum pass_result {
	PASS_DONE,
	PASS_STOPPED, /* SIGINT or SIGTERM */
	PASS_FAILED,  /* a vCPU hit an error, already reported */
};

int run_install_signals(void);
bool run_stop_requested(void);
/* SIGUSR1 arrived (--dirty-log-on-signal) */
bool run_go_requested(void);
int run_start(struct vm *vm, enum thread_names names);
enum pass_result run_pass(struct vm *vm);
void run_stop(struct vm *vm);

/* reclaim.c: the --reclaim thread; stop returns its MADV_DONTNEED calls */
int reclaim_start(struct vm *vm, unsigned int ms);
uint64_t reclaim_stop(void);
/*
 * uffd.c: --uffd's registration and thread; stop says the pages it supplied
 * (COPIES may be NULL) and returns -1 if the thread stopped on an error (said)
 */
int uffd_start(struct vm *vm);
int uffd_stop(uint64_t *copies);

/* report.c */
/* CSV rows go to CSV from now on, for the VM called NAME (NULL: the process name). */
void report_open(struct csv_writer *csv, const char *name);
/* The rows from now on are of the process's VM INDEX (1: its first). */
void report_vm(unsigned int index);
void report_time(const char *what, const char *metric, double secs);
void report_count(const char *what, const char *metric, uint64_t value);
uint64_t report_vcpu_stat_sum(struct vm *vm, const char *name);
void report_kvm_stats(struct vm *vm);
const char *report_size(char *buf, size_t len, uint64_t bytes);

#endif
