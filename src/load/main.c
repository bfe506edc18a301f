// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-load: a known KVM MMU fault load. Phases as in the KVM selftests'
 * dirty_log_perf_test: populate, more write passes, dirty-log iterations,
 * then every KVM binary statistic.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "load.h"
#include "log.h"
#include "sysinfo.h"

const char *log_prog = "kvmmmu-load";
bool log_verbose;
FILE *load_out;

struct phases {
	struct vm *vm;
	const struct load_opts *o;
	double deadline;  /* monotonic seconds; only with --duration */
	uint64_t passes;  /* write passes every vCPU completed */
	char current[64]; /* what a Ctrl-C interrupts */
};

static bool time_left(const struct phases *p)
{
	return p->o->duration && sysinfo_monotonic() < p->deadline;
}

static enum pass_result timed_pass(struct phases *p, double *secs)
{
	double t0 = sysinfo_monotonic();
	enum pass_result res = run_pass(p->vm);

	*secs = sysinfo_monotonic() - t0;
	if (res == PASS_DONE)
		p->passes++;
	return res;
}

/* pf_taken summed over vCPUs since BEFORE: the faults a pass took. */
static void report_faults(struct phases *p, const char *what, const char *metric, uint64_t before,
			  double secs)
{
	uint64_t faults;

	if (!p->vm->vcpus[0].have_stats)
		return;
	faults = report_vcpu_stat_sum(p->vm, "pf_taken") - before;
	fprintf(load_out, "%s faults: %llu pf_taken (%.0f/s)\n", what, (unsigned long long)faults,
		secs > 0 ? faults / secs : 0.0);
	report_count(NULL, metric, faults);
}

static enum pass_result write_pass(struct phases *p, const char *what, const char *metric,
				   const char *fault_metric)
{
	uint64_t pf = report_vcpu_stat_sum(p->vm, "pf_taken");
	enum pass_result res;
	double secs;

	snprintf(p->current, sizeof(p->current), "%s", what);
	res = timed_pass(p, &secs);
	if (res != PASS_DONE)
		return res;
	report_time(what, metric, secs);
	report_faults(p, what, fault_metric, pf, secs);
	return res;
}

static enum pass_result dirty_log_iteration(struct phases *p, unsigned int i)
{
	char what[64], metric[64], faults[64];
	enum pass_result res;
	uint64_t dirty;
	double t0;

	snprintf(what, sizeof(what), "Iteration %u dirty memory", i);
	snprintf(metric, sizeof(metric), "iteration_%u_dirty_memory_s", i);
	snprintf(faults, sizeof(faults), "iteration_%u_pf_taken", i);
	res = write_pass(p, what, metric, faults);
	if (res != PASS_DONE)
		return res;

	t0 = sysinfo_monotonic();
	if (dirty_log_get(p->vm, &dirty))
		return PASS_FAILED;
	snprintf(what, sizeof(what), "Iteration %u get dirty log", i);
	snprintf(metric, sizeof(metric), "iteration_%u_get_dirty_log_s", i);
	report_time(what, metric, sysinfo_monotonic() - t0);
	snprintf(what, sizeof(what), "Iteration %u dirty pages", i);
	snprintf(metric, sizeof(metric), "iteration_%u_dirty_pages", i);
	report_count(what, metric, dirty);

	if (!p->vm->manual_protect)
		return PASS_DONE;
	t0 = sysinfo_monotonic();
	if (dirty_log_clear(p->vm))
		return PASS_FAILED;
	snprintf(what, sizeof(what), "Iteration %u clear dirty log", i);
	snprintf(metric, sizeof(metric), "iteration_%u_clear_dirty_log_s", i);
	report_time(what, metric, sysinfo_monotonic() - t0);
	return PASS_DONE;
}

/*
 * What turning dirty logging off left mapped shows in the faults of the next
 * pass: where the mappings were zapped, every huge page refaults through the
 * slow path; where they were kept (write-protected by the last clear), the
 * same faults only restore write access, locklessly (pf_fast).
 */
static enum pass_result after_dirty_log_pass(struct phases *p, unsigned int i)
{
	uint64_t fast = report_vcpu_stat_sum(p->vm, "pf_fast");
	char what[64], metric[64], faults[64];
	enum pass_result res;

	snprintf(what, sizeof(what), "After dirty logging pass %u", i);
	snprintf(metric, sizeof(metric), "after_pass_%u_write_memory_s", i);
	snprintf(faults, sizeof(faults), "after_pass_%u_pf_taken", i);
	res = write_pass(p, what, metric, faults);
	if (res != PASS_DONE || !p->vm->vcpus[0].have_stats)
		return res;
	fast = report_vcpu_stat_sum(p->vm, "pf_fast") - fast;
	snprintf(what, sizeof(what), "After dirty logging pass %u fast faults", i);
	snprintf(metric, sizeof(metric), "after_pass_%u_pf_fast", i);
	report_count(what, metric, fast);
	return res;
}

static enum pass_result dirty_log_phase(struct phases *p)
{
	enum pass_result res = PASS_DONE;
	double t0 = sysinfo_monotonic();

	snprintf(p->current, sizeof(p->current), "enabling dirty logging");
	if (dirty_log_enable(p->vm))
		return PASS_FAILED;
	report_time("Enabling dirty logging", "enable_dirty_logging_s", sysinfo_monotonic() - t0);

	for (unsigned int i = 1; i <= p->o->dirty_iters || time_left(p); i++) {
		res = dirty_log_iteration(p, i);
		if (res != PASS_DONE)
			return res;
	}

	snprintf(p->current, sizeof(p->current), "disabling dirty logging");
	t0 = sysinfo_monotonic();
	if (dirty_log_disable(p->vm))
		return PASS_FAILED;
	report_time("Disabling dirty logging", "disable_dirty_logging_s", sysinfo_monotonic() - t0);

	for (unsigned int i = 1; res == PASS_DONE && i <= p->o->passes_after; i++)
		res = after_dirty_log_pass(p, i);
	return res;
}

/* Plain passes until the deadline: too many to print one line each. */
static enum pass_result timed_passes(struct phases *p)
{
	uint64_t n = 0, pf = report_vcpu_stat_sum(p->vm, "pf_taken");
	double t0 = sysinfo_monotonic(), secs;
	enum pass_result res = PASS_DONE;

	snprintf(p->current, sizeof(p->current), "timed write passes");
	while (time_left(p)) {
		res = timed_pass(p, &secs);
		if (res != PASS_DONE)
			break;
		n++;
	}
	if (res == PASS_FAILED)
		return res;
	secs = sysinfo_monotonic() - t0;
	report_count("Timed write passes", "timed_passes", n);
	report_time("Timed write passes", "timed_passes_s", secs);
	report_faults(p, "Timed write passes", "timed_passes_pf_taken", pf, secs);
	return res;
}

/*
 * --dirty-log-on-signal: the VM runs (a write pass every 10 ms, faulting
 * nothing once populated) until SIGUSR1 starts dirty logging, as a live
 * migration starts on a VM that has run for a while, perhaps since before
 * a tracer attached.
 */
static enum pass_result passes_until_signal(struct phases *p)
{
	const struct timespec pause = {.tv_nsec = 10000000};
	enum pass_result res = PASS_DONE;
	double secs;

	snprintf(p->current, sizeof(p->current), "write passes until SIGUSR1");
	while (res == PASS_DONE && !run_go_requested()) {
		if (run_stop_requested())
			return PASS_STOPPED;
		res = timed_pass(p, &secs);
		nanosleep(&pause, NULL);
	}
	return res;
}

static enum pass_result run_phases(struct phases *p)
{
	enum pass_result res;

	p->deadline = sysinfo_monotonic() + p->o->duration;
	res = write_pass(p, "Populate memory", "populate_s", "populate_pf_taken");
	for (unsigned int i = 2; res == PASS_DONE && i <= p->o->passes; i++) {
		char what[64], metric[64], faults[64];

		snprintf(what, sizeof(what), "Pass %u write memory", i);
		snprintf(metric, sizeof(metric), "pass_%u_write_memory_s", i);
		snprintf(faults, sizeof(faults), "pass_%u_pf_taken", i);
		res = write_pass(p, what, metric, faults);
	}
	if (res == PASS_DONE && p->o->dirty_log_on_signal)
		res = passes_until_signal(p);
	if (res != PASS_DONE)
		return res;
	if (p->o->dirty_iters)
		return dirty_log_phase(p);
	if (p->o->duration)
		return timed_passes(p);
	return PASS_DONE;
}

static int check_memory(const struct load_opts *o)
{
	uint64_t total, avail = sysinfo_mem_available();
	char a[32], b[32];

	if (__builtin_mul_overflow(o->mem, (uint64_t)o->vcpus, &total) ||
	    total / LOAD_PAGE_SIZE > UINT32_MAX) {
		elog("--mem: %s x %u vCPU%s is too large", report_size(a, sizeof(a), o->mem),
		     o->vcpus, o->vcpus == 1 ? "" : "s");
		return -1;
	}
	if (avail && total > avail) {
		elog("--mem: %s x %u vCPU%s = %s exceeds available memory (%llu MiB MemAvailable)",
		     report_size(a, sizeof(a), o->mem), o->vcpus, o->vcpus == 1 ? "" : "s",
		     report_size(b, sizeof(b), total), (unsigned long long)(avail >> 20));
		return -1;
	}
	return 0;
}

static int check_vcpus(int kvm_fd, const struct load_opts *o)
{
	int max = ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);

	if (max <= 0)
		max = ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	if (max > 0 && o->vcpus > (unsigned int)max) {
		elog("--vcpus: %u exceeds the KVM limit of %d vCPUs per VM (KVM_CAP_MAX_VCPUS)",
		     o->vcpus, max);
		return -1;
	}
	return 0;
}

static int open_csv(struct csv_writer *w, const struct load_opts *o, int argc, char **argv)
{
	struct csv_meta meta = {
		.label = o->label,
		.command_line = sysinfo_join_argv(argc, argv),
		.tool = "kvmmmu-load",
	};
	int err = csv_writer_open(w, o->csv_path, &meta);

	free((char *)meta.command_line);
	if (err) { /* the preamble is written through: a full disk is found now */
		elog("--csv: cannot write '%s': %s", o->csv_path, strerror(-err));
		return -1;
	}
	if (!strcmp(o->csv_path, "-"))
		load_out = stderr; /* stdout carries nothing but CSV */
	report_open(w, o->name);
	return 0;
}

static const char *host_pages(const struct load_opts *o)
{
	if (o->gmem)
		return "guest_memfd (mmap-able, shared)";
	return o->thp ? "THP (MADV_HUGEPAGE)" : "4 KiB (MADV_NOHUGEPAGE)";
}

static void print_setup(const struct vm *vm, const struct load_opts *o)
{
	char per[32], total[32];

	if (o->shared)
		fprintf(load_out,
			"Test memory: %s shared by %u vCPU%s (all write every page) at GPA "
			"[0x%llx, 0x%llx), host pages: %s\n",
			report_size(total, sizeof(total), vm->test_size), o->vcpus,
			o->vcpus == 1 ? "" : "s", (unsigned long long)vm->test_gpa,
			(unsigned long long)(vm->test_gpa + vm->test_size), host_pages(o));
	else
		fprintf(load_out,
			"Test memory: %u vCPU%s x %s = %s at GPA [0x%llx, 0x%llx), "
			"host pages: %s\n",
			o->vcpus, o->vcpus == 1 ? "" : "s", report_size(per, sizeof(per), o->mem),
			report_size(total, sizeof(total), vm->test_size),
			(unsigned long long)vm->test_gpa,
			(unsigned long long)(vm->test_gpa + vm->test_size), host_pages(o));
	if (o->dirty_iters)
		fprintf(load_out, "Dirty log: %s\n",
			vm->manual_protect ? "manual protection (KVM_CLEAR_DIRTY_LOG)"
					   : "KVM_GET_DIRTY_LOG write-protects");
	if (o->mode != GUEST_LONG)
		fprintf(load_out, "Guest mode: %s\n", guest_mode_name(o->mode));
	if (o->name)
		fprintf(load_out, "VM name: %s\n", o->name);
	report_count("Pages per vCPU", "pages_per_vcpu", o->mem / LOAD_PAGE_SIZE);
	report_count(NULL, "vcpus", o->vcpus);
}

/*
 * One VM's life: made, run through every phase, reported, destroyed. 0, or
 * 1 when it failed; *STOPPED when a signal ended it.
 */
static int run_vm(int kvm_fd, const struct load_opts *o, bool *stopped)
{
	struct vm vm = {.fd = -1};
	struct phases p = {.vm = &vm, .o = o, .current = "setup"};
	enum pass_result res = PASS_FAILED;

	if (vm_create(&vm, kvm_fd, o))
		goto out;
	if (o->dirty_iters && dirty_log_setup(&vm))
		goto out;
	print_setup(&vm, o);
	/* before any vCPU thread runs: every page of the test memory is missing */
	if (o->uffd && uffd_start(&vm))
		goto out;
	if (run_start(&vm, o->thread_names)) {
		run_stop(&vm);
		goto out;
	}
	if (o->reclaim_ms && reclaim_start(&vm, o->reclaim_ms)) {
		run_stop(&vm);
		goto out;
	}
	res = run_phases(&p);
	run_stop(&vm);
	if (o->reclaim_ms)
		report_count("Reclaim calls (MADV_DONTNEED)", "reclaim_calls", reclaim_stop());
	if (o->uffd) {
		uint64_t copies;

		if (uffd_stop(&copies))
			res = PASS_FAILED;
		report_count("Pages supplied through userfaultfd (UFFDIO_COPY)", "uffd_copies",
			     copies);
	}

	if (res == PASS_STOPPED)
		fprintf(load_out, "Interrupted during %s; statistics so far:\n", p.current);
	report_count("Write passes completed", "passes", p.passes);
	if (o->mode == GUEST_CR0WP) /* two a store; what each cost shows in the tracer's figures */
		report_count("CR0 writes (CR0.WP off, on)", "cr0_wp_writes",
			     2 * p.passes * (o->mem / LOAD_PAGE_SIZE) * o->vcpus);
	report_kvm_stats(&vm);
out:
	uffd_stop(NULL); /* (after a failed setup; else nothing to do) */
	vm_destroy(&vm);
	*stopped = res == PASS_STOPPED;
	return res == PASS_FAILED ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct csv_writer csv = {0};
	struct load_opts o;
	bool stopped = false;
	int kvm_fd, ret = 1;

	load_out = stdout;
	/* each phase's lines as it ends, also into a pipe or a log that others watch */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = load_parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? cli_flush_stdout() : EXIT_USAGE; /* --help, --version */
	if (check_memory(&o))
		return EXIT_USAGE;
	kvm_fd = kvm_open_dev();
	if (kvm_fd < 0)
		return 1;
	if (check_vcpus(kvm_fd, &o)) {
		close(kvm_fd);
		return EXIT_USAGE;
	}
	ret = 1;
	if (o.csv_path && open_csv(&csv, &o, argc, argv))
		goto out_kvm;
	if (run_install_signals())
		goto out;
	/* VMs in turn: a VM is a struct kvm, not a process (tools must tell them apart) */
	ret = 0;
	for (unsigned int i = 1; i <= o.vms && !ret && !stopped && !run_stop_requested(); i++) {
		if (o.vms > 1)
			fprintf(load_out, "%sVM %u of %u\n", i > 1 ? "\n" : "", i, o.vms);
		report_vm(i);
		ret = run_vm(kvm_fd, &o, &stopped);
	}
	if (!ret && !stopped && o.linger > 0) {
		double until = sysinfo_monotonic() + o.linger;

		fprintf(load_out, "Lingering %.1f s with no VM\n", o.linger);
		while (sysinfo_monotonic() < until && !run_stop_requested())
			usleep(10000);
	}
out:
	if (o.csv_path && csv_writer_close(&csv) && !ret) {
		elog("--csv: cannot write '%s'", o.csv_path);
		ret = 1;
	}
out_kvm:
	close(kvm_fd);
	/* the timings and statistics lost on their way (a full disk) are a failed run */
	if (cli_flush_stdout())
		ret = 1;
	return ret;
}
