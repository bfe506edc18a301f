// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procs.h"
#include "vm_name.h"

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* "4242", and "-1" or "0": written as a PID, whether or not it is one. */
static bool pid_syntax(const char *s)
{
	return all_digits(*s == '-' ? s + 1 : s);
}

int proc_spec_init(struct proc_spec *s, const char *text)
{
	memset(s, 0, sizeof(*s));
	if (!*text)
		return -EINVAL; /* an empty pattern would match every process */
	if (pid_syntax(text)) {
		/* "-1" or "0" as a name would match the comms that contain it: no user means that
		 */
		long pid = *text == '-' ? 0 : strtol(text, NULL, 10);

		if (pid <= 0 || pid > PROC_SPEC_PID_MAX)
			return -ERANGE;
		s->text = strdup(text);
		if (!s->text)
			return -ENOMEM;
		s->pid = (int)pid;
		return 0;
	}
	s->text = strdup(text);
	if (!s->text)
		return -ENOMEM;
	s->regex = malloc(sizeof(regex_t));
	if (!s->regex)
		return -ENOMEM;
	if (regcomp(s->regex, text, REG_EXTENDED | REG_NOSUB)) {
		free(s->regex);
		s->regex = NULL;
		return -EINVAL;
	}
	return 0;
}

void proc_spec_why(const char *text, char *buf, size_t len)
{
	regex_t re;
	int err;

	if (!*text) {
		snprintf(buf, len, "an empty name would match every process");
		return;
	}
	if (pid_syntax(text)) {
		snprintf(buf, len, "not a valid PID (a PID is from 1 to %d)", PROC_SPEC_PID_MAX);
		return;
	}
	err = regcomp(&re, text, REG_EXTENDED | REG_NOSUB);
	if (!err) {
		regfree(&re);
		snprintf(buf, len, "%s", strerror(ENOMEM));
		return;
	}
	/* regerror() names what is wrong: "Unmatched [, [^, ...", "Invalid preceding regular
	 * expression" */
	snprintf(buf, len, "not a valid name pattern (an extended regular expression): ");
	regerror(err, &re, buf + strlen(buf), len - strlen(buf));
}

void proc_spec_free(struct proc_spec *s)
{
	if (s->regex) {
		regfree(s->regex);
		free(s->regex);
	}
	free(s->text);
	memset(s, 0, sizeof(*s));
}

bool proc_spec_matches(const struct proc_spec *s, int pid, const char *comm)
{
	if (s->pid)
		return s->pid == pid;
	return s->regex && !regexec(s->regex, comm, 0, NULL, 0);
}

void proc_comm(const char *proc_root, int pid, int tid, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	if (tid > 0)
		snprintf(path, sizeof(path), "%s/%d/task/%d/comm", proc_root, pid, tid);
	else
		snprintf(path, sizeof(path), "%s/%d/comm", proc_root, pid);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/*
 * Whether any of the N SPECS matches PID, by its process name or else by
 * its VM's name (QEMU's -name, ...: read from its command line only then).
 */
bool procs_spec_any(const struct proc_spec *specs, size_t n, int pid, const char *comm,
		    const char *proc_root)
{
	struct vm_name vn;
	bool match = false;

	for (size_t i = 0; i < n; i++)
		if (proc_spec_matches(&specs[i], pid, comm))
			return true;
	if (vm_name_read(proc_root, pid, comm, &vn))
		return false;
	for (size_t i = 0; i < n && !match && strcmp(vn.name, comm); i++)
		match = proc_spec_matches(&specs[i], pid, vn.name);
	vm_name_free(&vn);
	return match;
}

/* procs_find(), and with VMMS only processes with a VM open (every one of them if N is 0). */
static int find(const char *proc_root, const struct proc_spec *specs, size_t n, bool vmms, int self,
		int *pids, size_t max)
{
	DIR *d = opendir(proc_root);
	struct dirent *e;
	size_t found = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char comm[64];
		int pid;

		if (!all_digits(e->d_name))
			continue;
		pid = atoi(e->d_name);
		if (pid == self)
			continue;
		if (n || !vmms) {
			proc_comm(proc_root, pid, 0, comm, sizeof(comm));
			if (!procs_spec_any(specs, n, pid, comm, proc_root))
				continue;
		}
		if (vmms && !proc_is_vmm(proc_root, pid))
			continue;
		if (found < max)
			pids[found] = pid;
		found++;
	}
	closedir(d);
	return (int)(found < max ? found : max);
}

int procs_find(const char *proc_root, const struct proc_spec *specs, size_t n, int self, int *pids,
	       size_t max)
{
	return find(proc_root, specs, n, false, self, pids, max);
}

int procs_find_vmms(const char *proc_root, const struct proc_spec *specs, size_t n, int self,
		    int *pids, size_t max)
{
	return find(proc_root, specs, n, true, self, pids, max);
}

bool proc_is_vmm(const char *proc_root, int pid)
{
	return proc_has_vm(proc_root, pid) > 0;
}

int proc_has_vm(const char *proc_root, int pid)
{
	char path[PATH_MAX], target[128];
	struct dirent *e;
	bool vmm = false;
	int links = 0, read = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/fd", proc_root, pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!vmm && (e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		links++;
		n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		read++;
		target[n] = '\0';
		/* a VM's fd, or a vCPU's (a VMM may close the VM's own once its vCPUs exist) */
		vmm = !strcmp(target, "anon_inode:kvm-vm") ||
		      !strncmp(target, "anon_inode:kvm-vcpu:", 20);
	}
	closedir(d);
	if (!vmm && links && !read)
		return -EACCES; /* fds we may not look at say nothing */
	return vmm;
}
