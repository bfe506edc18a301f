// SPDX-License-Identifier: GPL-2.0
/*
 * kvmpin: KVM's own page-fault counters of every VM a command makes, read
 * from KVM's debugfs once the command has exited. An oracle of the
 * distro-kernel harness's selftests group: the KVM selftests keep no stats
 * fd, and KVM frees a VM, with its counters and its debugfs directory
 * (/sys/kernel/debug/kvm/PID-FD), when its last reference goes.
 *
 *   kvmpin [-i MS] -o FILE -- COMMAND [ARG...]
 *
 * Runs COMMAND as a child and, every MS milliseconds (default 10) until it
 * exits, opens a file of each new debugfs directory of the child. An open
 * file holds a reference on the VM (kvm_get_kvm_safe): the VM, its counters
 * and its directory stay, and its pf_* files are read when the command is
 * done. Each is the sum over all of the VM's vCPUs: KVM's debugfs has no
 * per-vCPU counters, and a vCPU's stats fd (KVM_GET_STATS_FD) can only be
 * had by the VM's own process.
 *
 * A VM held this way outlives the child's own teardown, so a later VM the
 * child makes with the same fd number finds its name taken: KVM warns
 * "debugfs: duplicate directory" and gives it none, and kvmpin cannot see
 * it. The selftests make their VMs one after another, with the same fd.
 *
 * FILE, written when COMMAND has exited (to FILE.tmp, then renamed):
 *   pid PID status STATUS
 *   vm N debugfs PID-FD vcpu_dirs N pf_taken N pf_fixed N ...
 *   total pf_taken N pf_fixed N ...
 * VMs in the order their directories appeared. STATUS and kvmpin's exit
 * status are COMMAND's (128 + N when killed by signal N); 125 when kvmpin
 * itself fails.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_VMS 64
#define MAX_STATS 16
#define DEBUGFS "/sys/kernel/debug/kvm"
/* the file held: any statistic's pins the VM; this one every kernel has */
#define PIN "pf_taken"

struct vm {
	char name[32]; /* PID-FD */
	int pin;
};

static struct vm vms[MAX_VMS];
static int n_vms;
static pid_t child;
/* the pf_* statistics and their sums over the VMs */
static char *stat_name[MAX_STATS];
static unsigned long long total[MAX_STATS];
static int n_stats;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static int vcpu_dirs(const char *name)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int n = 0, id;

	snprintf(path, sizeof(path), DEBUGFS "/%s", name);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += sscanf(e->d_name, "vcpu%d", &id) == 1;
	closedir(d);
	return n;
}

/*
 * Holds the VM of the directory NAME by one of its files. Not before it
 * has a vCPU: KVM makes the directory, then its files, then at each
 * KVM_CREATE_VCPU a vcpuN folder.
 */
static bool hold(struct vm *vm, const char *name)
{
	char path[PATH_MAX];

	if (vcpu_dirs(name) <= 0)
		return false;
	snprintf(path, sizeof(path), DEBUGFS "/%s/" PIN, name);
	vm->pin = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(vm->name, sizeof(vm->name), "%s", name);
	return vm->pin >= 0;
}

/* Holds the child's VMs whose directories are new. */
static void scan(void)
{
	char prefix[32];
	struct dirent *e;
	DIR *d = opendir(DEBUGFS);
	int i;

	if (!d)
		return;
	snprintf(prefix, sizeof(prefix), "%d-", child);
	while ((e = readdir(d)) && n_vms < MAX_VMS) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) ||
		    strlen(e->d_name) >= sizeof(vms[0].name))
			continue;
		for (i = 0; i < n_vms && strcmp(vms[i].name, e->d_name); i++)
			;
		if (i == n_vms && hold(&vms[n_vms], e->d_name))
			n_vms++;
	}
	closedir(d);
}

/* A debugfs statistic: "123\n". */
static int read_value(int dir, const char *stat, unsigned long long *value)
{
	int fd = openat(dir, stat, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;
	char buf[32], *end;

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*value = strtoull(buf, &end, 10);
	return end == buf || *end != '\n' ? -1 : 0;
}

static int is_pf(const struct dirent *e)
{
	return !strncmp(e->d_name, "pf_", 3);
}

/* Adds VALUE to the sum of the statistic NAME. */
static void add(const char *name, unsigned long long value)
{
	int k;

	for (k = 0; k < n_stats && strcmp(stat_name[k], name); k++)
		;
	if (k == n_stats) {
		if (n_stats == MAX_STATS)
			return;
		stat_name[n_stats++] = strdup(name);
	}
	total[k] += value;
}

/* " NAME VALUE" for each pf_* statistic of the VM VM, in name order. */
static int print_vm(FILE *f, const struct vm *vm)
{
	char path[PATH_MAX];
	struct dirent **e;
	unsigned long long v;
	int n, dir, err = 0;

	snprintf(path, sizeof(path), DEBUGFS "/%s", vm->name);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	n = dir < 0 ? -1 : scandir(path, &e, is_pf, alphasort);
	if (n <= 0)
		err = -1;
	for (int i = 0; i < n; i++) {
		if (!err && read_value(dir, e[i]->d_name, &v))
			err = -1;
		if (!err) {
			fprintf(f, " %s %llu", e[i]->d_name, v);
			add(e[i]->d_name, v);
		}
		free(e[i]);
	}
	if (n >= 0)
		free(e);
	if (dir >= 0)
		close(dir);
	fputc('\n', f);
	if (err)
		fprintf(stderr, "kvmpin: %s: its statistics cannot be read\n", vm->name);
	return err;
}

static int report(const char *out, int status)
{
	char tmp[4096];
	int err = 0;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "kvmpin: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "pid %d status %d\n", child, status);
	for (int i = 0; i < n_vms; i++) {
		fprintf(f, "vm %d debugfs %s vcpu_dirs %d", i, vms[i].name, vcpu_dirs(vms[i].name));
		err |= print_vm(f, &vms[i]);
	}
	fprintf(f, "total");
	for (int k = 0; k < n_stats; k++)
		fprintf(f, " %s %llu", stat_name[k], total[k]);
	fputc('\n', f);
	if (fclose(f) || rename(tmp, out)) {
		fprintf(stderr, "kvmpin: %s: %s\n", out, strerror(errno));
		return -1;
	}
	return err;
}

static void usage(void)
{
	fprintf(stderr, "usage: kvmpin [-i MS] -o FILE -- COMMAND [ARG...]\n");
	exit(125);
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = forward};
	const char *out = NULL;
	int opt, interval = 10, pidfd, status = 0, code, r;
	struct pollfd p;

	while ((opt = getopt(argc, argv, "+i:o:")) != -1) {
		if (opt == 'i')
			interval = atoi(optarg);
		else if (opt == 'o')
			out = optarg;
		else
			usage();
	}
	if (!out || optind >= argc || interval <= 0)
		usage();
	child = fork();
	if (child < 0) {
		perror("kvmpin: fork");
		return 125;
	}
	if (!child) {
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "kvmpin: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	if (pidfd < 0) {
		perror("kvmpin: pidfd_open");
		kill(child, SIGKILL);
		return 125;
	}
	/* readable once the child has exited */
	p = (struct pollfd){.fd = pidfd, .events = POLLIN};
	for (;;) {
		scan();
		r = poll(&p, 1, interval);
		if (r > 0 || (r < 0 && errno != EINTR))
			break;
	}
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	return report(out, code) ? 125 : code;
}
