// SPDX-License-Identifier: GPL-2.0
/*
 * kvmmmu-check --validate: traces one VM for a while and compares kvmmmu's
 * counts with KVM's own counters over the same window, vCPU by vCPU.
 *
 * "The same window" is made exact by stopping the VMM (SIGSTOP) for the
 * two snapshots: a stopped vCPU has left KVM_RUN, so no fault is in flight
 * and nothing is counted by one side and not yet by the other. Each pause
 * lasts a few milliseconds.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "deathwatch.h"
#include "model.h"
#include "procs.h"
#include "session.h"
#include "vm_stats_fds.h"

static volatile sig_atomic_t interrupted;
static int stopped_pid;		   /* to resume on any way out */
static struct deathwatch watchdog; /* resumes the VM if we die */
/*
 * Whether we stopped the VM, shared with the watchdog (a process of its
 * own): it resumes only a VM we stopped, never one the user had stopped.
 */
static volatile bool *we_stopped;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* All of PID's threads are stopped ('T' in /proc/PID/task/TID/stat), or gone. */
static bool all_stopped(int pid)
{
	char path[64];
	struct dirent *e;
	bool all = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return true;
	while (all && (e = readdir(d))) {
		char stat[384], buf[512], *p;
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(stat, sizeof(stat), "/proc/%d/task/%s/stat", pid, e->d_name);
		f = fopen(stat, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
			all = p[2] == 'T' || p[2] == 't' || p[2] == 'Z' || p[2] == 'X';
		fclose(f);
	}
	closedir(d);
	return all;
}

/* A VMM we stopped is never left behind, even if we are killed while it is stopped. */
static void resume_stopped_vm(void *vm_pid)
{
	if (*we_stopped)
		kill((pid_t)(long)vm_pid, SIGCONT);
}

/* Whether PID runs and every thread of it is stopped (by the user: not by us yet). */
static bool found_stopped(int pid)
{
	return !kill(pid, 0) && all_stopped(pid);
}

static int pause_vm(int pid)
{
	struct timespec tick = {0, 1000000};

	/* stopped already, it has no fault in flight: it is read as it is, and left so */
	if (found_stopped(pid))
		return 0;
	*we_stopped = true;
	if (kill(pid, SIGSTOP))
		return -errno;
	stopped_pid = pid;
	for (int i = 0; i < 2000; i++) {
		if (all_stopped(pid))
			return 0;
		nanosleep(&tick, NULL);
	}
	return -ETIMEDOUT;
}

static void resume_vm(void)
{
	if (stopped_pid)
		kill(stopped_pid, SIGCONT);
	stopped_pid = 0;
	*we_stopped = false;
}

/* KVM's counters of PID in the session (taken at its open), or NULL. */
static struct vm_stats *session_kvm(struct session *s, int pid)
{
	return kvm_counts_of(&s->kvm, pid);
}

/*
 * Both sides' counts at one instant, with the VM stopped: the session reads
 * kvmmmu's figures (as final: nothing is in flight in a stopped VM) and
 * KVM's; the first reading becomes KVM's baseline.
 */
static int snapshot(struct session *s, struct model *m, int pid, bool rebase)
{
	int err = pause_vm(pid);
	struct vm_stats *kvm;

	if (!err)
		err = session_read(s, m, true);
	kvm = session_kvm(s, pid);
	if (!err && rebase && kvm)
		err = vm_stats_rebase(kvm);
	resume_vm();
	return err;
}

static int find_one(const char *spec_text, int *pid)
{
	struct proc_spec spec;
	char why[160];
	int pids[64], n;

	/* (check_parse_args() refused such text already, as a usage error) */
	if (proc_spec_init(&spec, spec_text)) {
		proc_spec_why(spec_text, why, sizeof(why));
		proc_spec_free(&spec);
		elog("--validate '%s': %s", spec_text, why);
		return -EINVAL;
	}
	n = procs_find("/proc", &spec, 1, getpid(), pids, 64);
	if (n <= 0)
		elog("--validate: no process %s '%s'", spec.pid ? "with PID" : "matches",
		     spec_text);
	proc_spec_free(&spec);
	if (n <= 0)
		return -ESRCH;
	if (n > 1) {
		elog("--validate: '%s' matches %d processes; give one PID", spec_text, n);
		return -E2BIG;
	}
	if (!proc_is_vmm("/proc", pids[0])) {
		elog("--validate: process %d has no KVM VM open", pids[0]);
		return -ENOENT;
	}
	*pid = pids[0];
	return 0;
}

static const struct vcpu_row *find_row(const struct model *m, int pid, int vcpu)
{
	const struct vm_row *vm = model_find_vm(m, pid, 1);

	for (size_t i = 0; vm && i < vm->n_rows; i++)
		if (vm->rows[i].vcpu == vcpu)
			return &vm->rows[i];
	return NULL;
}

/* Prints one pair, for vCPU VCPU or the VM (vcpu < 0); returns whether it agrees. */
static bool compare(int vcpu, const char *ours, __u64 bpf, const struct vm_stats *kvm,
		    const char *theirs)
{
	uint64_t value;
	char who[16];
	bool agree;

	if (vcpu < 0)
		snprintf(who, sizeof(who), "VM");
	else
		snprintf(who, sizeof(who), "vCPU %d", vcpu);
	if (vcpu < 0 ? vm_stats_sum(kvm, theirs, &value)
		     : vm_stats_get(kvm, vcpu, theirs, &value)) {
		printf("  %-8s %-18s %12llu   %-14s %12s   (KVM has no such statistic)\n", who,
		       ours, (unsigned long long)bpf, theirs, "-");
		return true;
	}
	agree = bpf == value;
	printf("  %-8s %-18s %12llu   %-14s %12llu   %s\n", who, ours, (unsigned long long)bpf,
	       theirs, (unsigned long long)value, agree ? "agree" : "DISAGREE");
	return agree;
}

/* What kvmmmu counted between the snapshots: vCPU VCPU's, or the whole VM's (vcpu < 0). */
static void counted(struct figures *d, const struct model *before, const struct model *after,
		    int pid, int vcpu)
{
	const struct vm_row *vm = model_find_vm(after, pid, 1);
	static const struct figures zero;
	static struct figures one; /* histograms included: kept off the stack */

	memset(d, 0, sizeof(*d));
	for (size_t i = 0; vm && i < vm->n_rows; i++) {
		const struct vcpu_row *a = &vm->rows[i];
		const struct vcpu_row *b = find_row(before, pid, a->vcpu);

		if (vcpu >= 0 && a->vcpu != vcpu)
			continue;
		figures_sub(&one, &a->f, b ? &b->f : &zero);
		figures_add(d, &one);
	}
}

static int compare_one(const struct session *s, const struct vm_stats *kvm, const struct figures *d,
		       int vcpu)
{
	int fixed = ret_pf_value(&s->c.faults.ret_pf, "fixed");
	int spurious = ret_pf_value(&s->c.faults.ret_pf, "spurious");
	int disagree = !compare(vcpu, "faults", d->counters[KVMMMU_FAULTS], kvm, "pf_taken");

	if (fixed >= 0)
		disagree += !compare(vcpu, "ret_pf_fixed", d->ret_pf[fixed], kvm, "pf_fixed");
	if (spurious >= 0)
		disagree +=
			!compare(vcpu, "ret_pf_spurious", d->ret_pf[spurious], kvm, "pf_spurious");
	return disagree +
	       !compare(vcpu, "path_fast", d->counters[KVMMMU_PATH_FAST], kvm, "pf_fast");
}

/* Per vCPU; or VM-wide where KVM gives only sums (its debugfs, for a VMM without stats fds). */
static int compare_all(const struct session *s, const struct vm_stats *kvm,
		       const struct model *before, const struct model *after, int pid)
{
	static struct figures d;
	int disagree = 0;

	if (!kvm->n_vcpus && !kvm->vcpu_sums) {
		elog("--validate: pid %d has no vCPU statistics to compare", pid);
		return 1;
	}
	if (model_process_vms(after, pid) > 1) {
		elog("--validate: pid %d holds %zu VMs, whose KVM statistics kvmmmu does not yet "
		     "tell apart",
		     pid, model_process_vms(after, pid));
		return 1;
	}
	printf("\n  %-8s %-18s %12s   %-14s %12s\n", "", "kvmmmu", "", "KVM", "");
	if (kvm->vcpu_sums) {
		printf("  (KVM's debugfs: the VMM keeps no stats fd open, so VM-wide sums only)\n");
		counted(&d, before, after, pid, -1);
		return compare_one(s, kvm, &d, -1);
	}
	for (size_t i = 0; i < kvm->n_vcpus; i++) {
		counted(&d, before, after, pid, kvm->vcpus[i].vcpu);
		disagree += compare_one(s, kvm, &d, kvm->vcpus[i].vcpu);
	}
	return disagree;
}

int check_validate(const struct check_env *env)
{
	struct model before = {}, after = {};
	struct session s;
	struct session_opts opts = {
		.mode = env->mode,
		.attribution = ATTRIBUTE_AUTO,
		.kvm_stats = true,
		.kvm_stats_quiet = true, /* no KVM counters is the error here: said below */
	};
	struct proc_spec spec;
	const struct vm_stats *kvm;
	struct timespec window;
	char text[16];
	int pid, err;

	err = find_one(env->validate, &pid);
	if (err)
		return 1;
	/* the same session every live command uses, on that one VM */
	snprintf(text, sizeof(text), "%d", pid);
	if (proc_spec_init(&spec, text))
		return 1;
	opts.specs = &spec;
	opts.n_specs = 1;
	err = session_open(&s, &opts);
	if (err) {
		session_close(&s);
		proc_spec_free(&spec);
		return 1;
	}
	kvm = session_kvm(&s, pid);
	if (!kvm || (!kvm->have_vm && !kvm->n_vcpus)) {
		elog("--validate: cannot read KVM's counters of pid %d: %s", pid,
		     s.kvm.err == -EXDEV || !s.kvm.err
			     ? "the VMM keeps no KVM binary stats fd open (QEMU 7.2 opens one "
			       "per QMP query-stats and closes it), and KVM's debugfs counters are "
			       "not readable here (debugfs locked down, or not mounted)"
			     : strerror(-s.kvm.err));
		session_close(&s);
		proc_spec_free(&spec);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGQUIT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	we_stopped = mmap(NULL, sizeof(*we_stopped), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	err = we_stopped == MAP_FAILED
		      ? -errno
		      : deathwatch_start(&watchdog, resume_stopped_vm, (void *)(long)pid);
	if (err) {
		elog("--validate: cannot start the watchdog that resumes the VM: %s",
		     strerror(-err));
		session_close(&s);
		proc_spec_free(&spec);
		return 1;
	}
	printf("Validating kvmmmu against KVM's counters for pid %d over %.3g s (%s)\n", pid,
	       env->validate_secs,
	       found_stopped(pid) ? "the VM is stopped: read as it is, and left stopped"
				  : "the VM is paused twice, a few ms each, for exact snapshots");
	err = snapshot(&s, &before, pid, true);
	window.tv_sec = (time_t)env->validate_secs;
	window.tv_nsec = (long)((env->validate_secs - (double)window.tv_sec) * 1e9);
	if (!err)
		nanosleep(&window, NULL);
	if (!err && !interrupted)
		err = snapshot(&s, &after, pid, false);
	resume_vm();
	deathwatch_stop(&watchdog);
	munmap((void *)we_stopped, sizeof(*we_stopped));
	if (interrupted) {
		elog("--validate: interrupted");
		err = -EINTR;
	} else if (err) {
		elog("--validate: cannot snapshot pid %d: %s", pid, strerror(-err));
	} else {
		int disagree = compare_all(&s, session_kvm(&s, pid), &before, &after, pid);

		printf("\n%s\n", disagree ? "kvmmmu and KVM DISAGREE" : "kvmmmu and KVM agree");
		err = disagree ? -EDOM : 0;
	}
	model_free(&before);
	model_free(&after);
	session_close(&s);
	proc_spec_free(&spec);
	return err ? 1 : 0;
}
