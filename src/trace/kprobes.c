// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kprobes.h"
#include "array.h"
#include "deathwatch.h"
#include "log.h"
#include "tracefs.h"

#define GROUP_PREFIX "kvmmmu_"

/* Appends CMD to kprobe_events: 0, or -errno. */
static int write_events(const char *cmd)
{
	const char *dir = tracefs_dir();
	char path[PATH_MAX];
	int fd, err = 0;

	if (!dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/kprobe_events", dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, cmd, strlen(cmd)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* Removes GROUP/EVENT, waiting a little while a dying owner's perf fd still holds it. */
static void remove_event(const char *group, const char *event)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "-:%s/%s", group, event);
	for (int tries = 0; tries < 100; tries++) {
		struct timespec ten_ms = {0, 10 * 1000 * 1000};

		if (write_events(cmd) != -EBUSY)
			return;
		nanosleep(&ten_ms, NULL);
	}
}

/* Removes GROUP's events; NULL: those of every kvmmmu_<pid> group whose pid is gone. */
static void remove_group(const char *group)
{
	const char *dir = tracefs_dir();
	char path[PATH_MAX], line[512], *names = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/kprobe_events", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	/* the whole file first: removing while reading would skip lines */
	while (fgets(line, sizeof(line), f)) {
		char g[64], e[64], *slot;
		int pid;

		/* "r4096:kvmmmu_123/kvm_mmu_page_fault_123 kvm_mmu_page_fault" */
		if (sscanf(line, "%*[^:]:%63[^/]/%63s", g, e) != 2)
			continue;
		if (group ? strcmp(g, group) != 0
			  : sscanf(g, GROUP_PREFIX "%d", &pid) != 1 ||
				    (kill(pid, 0) == 0 || errno != ESRCH))
			continue;
		slot = array_grow(names, n + 1, &cap, 128);
		if (!slot)
			break;
		names = slot;
		snprintf(names + n * 128, 64, "%s", g);
		snprintf(names + n * 128 + 64, 64, "%s", e);
		n++;
	}
	fclose(f);
	for (size_t i = 0; i < n; i++)
		remove_event(names + i * 128, names + i * 128 + 64);
	free(names);
}

void kprobes_init(struct kprobes *k, unsigned int maxactive)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->group, sizeof(k->group), GROUP_PREFIX "%d", getpid());
	k->maxactive = maxactive > KPROBES_MAXACTIVE_MAX ? KPROBES_MAXACTIVE_MAX : maxactive;
}

/* The group's events, removed by the helper process once we are gone. */
static void remove_own_group(void *k)
{
	remove_group(((struct kprobes *)k)->group);
}

static int open_tracepoint(const char *group, const char *event)
{
	const char *dir = tracefs_dir();
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	char path[PATH_MAX];
	unsigned long long id;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, group, event);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%llu", &id) != 1) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	attr.config = id;
	/* a BPF program on a probe event runs on every CPU, whatever CPU the event is for */
	fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static struct kprobe_event *find_event(struct kprobes *k, const char *name)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->events[i].name, name))
			return &k->events[i];
	return NULL;
}

struct bpf_link *kprobes_attach(struct kprobes *k, struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog), *func = strchr(sec, '/');
	bool ret = !strncmp(sec, "kretprobe/", 10);
	struct kprobe_event *ev;
	struct bpf_link *link;
	char cmd[256], name[64];
	int err, fd;

	if (!func || !tracefs_dir() || !tracefs_has_kprobe_events())
		return bpf_program__attach(prog);
	func++;
	if (!k->janitor.pid) {
		remove_group(NULL); /* left by runs that died with their helper */
		err = deathwatch_start(&k->janitor, remove_own_group, k);
		if (err) {
			errno = -err;
			return NULL;
		}
	}
	snprintf(name, sizeof(name), "%s%s_%d", ret ? "ret_" : "", func, getpid());
	ev = find_event(k, name);
	if (!ev) { /* made once: a reload after a failed attach attaches to it again */
		ev = array_grow(k->events, k->n + 1, &k->cap, sizeof(*k->events));
		if (!ev) {
			errno = ENOMEM;
			return NULL;
		}
		k->events = ev;
		ev = &k->events[k->n];
		snprintf(ev->name, sizeof(ev->name), "%s", name);
		ev->retprobe = ret;
		if (ret)
			snprintf(cmd, sizeof(cmd), "r%u:%s/%s %s", k->maxactive, k->group, ev->name,
				 func);
		else
			snprintf(cmd, sizeof(cmd), "p:%s/%s %s", k->group, ev->name, func);
		err = write_events(cmd);
		if (err) {
			vlog("kprobe_events: '%s': %s", cmd, strerror(-err));
			errno = -err;
			return NULL;
		}
		k->n++;
	}
	fd = open_tracepoint(k->group, ev->name);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	link = bpf_program__attach_perf_event(prog, fd);
	if (!link) {
		err = errno;
		close(fd);
		errno = err;
	}
	return link;
}

bool kprobes_parse_profile_line(const char *line, char *event, size_t len, __u64 *missed)
{
	char name[128];
	unsigned long long hits, miss;
	char end;

	if (sscanf(line, " %127s %llu %llu %c", name, &hits, &miss, &end) != 3)
		return false;
	snprintf(event, len, "%s", name);
	*missed = miss;
	return true;
}

__u64 kprobes_missed(const struct kprobes *k)
{
	const char *dir = tracefs_dir();
	char path[PATH_MAX], line[512], event[128];
	__u64 missed, sum = 0;
	FILE *f;

	if (!k->n || !dir)
		return 0;
	snprintf(path, sizeof(path), "%s/kprobe_profile", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!kprobes_parse_profile_line(line, event, sizeof(event), &missed))
			continue;
		for (size_t i = 0; i < k->n; i++)
			if (!strcmp(event, k->events[i].name))
				sum += missed;
	}
	fclose(f);
	return sum;
}

void kprobes_close(struct kprobes *k)
{
	for (size_t i = 0; i < k->n; i++)
		remove_event(k->group, k->events[i].name);
	deathwatch_stop(&k->janitor);
	free(k->events);
	memset(k, 0, sizeof(*k));
}
