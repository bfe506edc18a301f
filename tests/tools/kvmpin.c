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
 * exits, opens the pf_* files of each new debugfs directory of the child.
 * An open file holds a reference on the VM (kvm_get_kvm_safe), so they are
 * read when the command is done, whole. Each is the sum over all of the
 * VM's vCPUs: KVM's debugfs has no per-vCPU counters, and a vCPU's stats fd
 * (KVM_GET_STATS_FD) can only be had by the VM's own process.
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

struct vm {
	char name[32]; /* PID-FD */
	int n_stats;
	char *stat[MAX_STATS];
	int fd[MAX_STATS];
	unsigned long long value[MAX_STATS];
};

static struct vm vms[MAX_VMS];
static int n_vms;
static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static int vcpu_dirs(const char *name)
{
	char path[128];
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
 * Opens the pf_* files of the directory NAME, sorted by name. Not before it
 * has a vCPU: KVM makes the directory, then its files, then at each
 * KVM_CREATE_VCPU a vcpuN folder.
 */
static bool hold(struct vm *vm, const char *name)
{
	char path[128];
	struct dirent **e;
	int n, dir;

	if (vcpu_dirs(name) <= 0)
		return false;
	snprintf(path, sizeof(path), DEBUGFS "/%s", name);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	n = dir < 0 ? -1 : scandir(path, &e, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (!strncmp(e[i]->d_name, "pf_", 3) && vm->n_stats < MAX_STATS) {
			int fd = openat(dir, e[i]->d_name, O_RDONLY | O_CLOEXEC);

			if (fd >= 0) {
				vm->fd[vm->n_stats] = fd;
				vm->stat[vm->n_stats++] = strdup(e[i]->d_name);
			}
		}
		free(e[i]);
	}
	if (n >= 0)
		free(e);
	if (dir >= 0)
		close(dir);
	snprintf(vm->name, sizeof(vm->name), "%s", name);
	return vm->n_stats > 0;
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

/* A debugfs statistic: "123\n". Read once: the files cannot seek (nonseekable_open). */
static int read_value(int fd, unsigned long long *value)
{
	char buf[32], *end;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*value = strtoull(buf, &end, 10);
	return end == buf || *end != '\n' ? -1 : 0;
}

static int report(const char *out, int status)
{
	unsigned long long total[MAX_STATS] = {0};
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "kvmpin: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "pid %d status %d\n", child, status);
	for (int i = 0; i < n_vms; i++) {
		struct vm *vm = &vms[i];

		fprintf(f, "vm %d debugfs %s vcpu_dirs %d", i, vm->name, vcpu_dirs(vm->name));
		for (int k = 0; k < vm->n_stats; k++) {
			if (read_value(vm->fd[k], &vm->value[k])) {
				fprintf(stderr, "kvmpin: %s/%s: unreadable\n", vm->name,
					vm->stat[k]);
				fclose(f);
				return -1;
			}
			fprintf(f, " %s %llu", vm->stat[k], vm->value[k]);
			total[k] += vm->value[k];
		}
		fputc('\n', f);
	}
	fprintf(f, "total");
	for (int k = 0; n_vms && k < vms[0].n_stats; k++)
		fprintf(f, " %s %llu", vms[0].stat[k], total[k]);
	fputc('\n', f);
	if (fclose(f) || rename(tmp, out)) {
		fprintf(stderr, "kvmpin: %s: %s\n", out, strerror(errno));
		return -1;
	}
	return 0;
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
