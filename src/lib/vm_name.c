// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm_name.h"

#define MAX_PROC_FILE (256 * 1024) /* a command line longer than this is cut */

/* The argument after the one equal to OPT (or OPT=VALUE's value), or NULL. */
static const char *arg_value(const char *cmdline, size_t len, const char *opt)
{
	size_t optlen = strlen(opt);

	for (const char *p = cmdline, *end = cmdline + len; p < end; p += strlen(p) + 1) {
		if (!strcmp(p, opt)) {
			const char *next = p + strlen(p) + 1;

			return next < end ? next : NULL;
		}
		if (!strncmp(p, opt, optlen) && p[optlen] == '=')
			return p + optlen + 1;
	}
	return NULL;
}

/*
 * QEMU's -name value: "NAME" or "guest=NAME,debug-threads=on,...", where
 * ",," is a comma within a value. The guest name, malloc()ed, or NULL.
 */
static char *qemu_guest_name(const char *value)
{
	size_t n = strlen(value);
	char *item = malloc(n + 1), *found = NULL;
	bool first = true;

	if (!item)
		return NULL;
	for (const char *p = value; !found;) {
		size_t k = 0;

		/* one item, unescaping ",," */
		while (*p && !(*p == ',' && p[1] != ',')) {
			if (*p == ',')
				p++;
			item[k++] = *p++;
		}
		item[k] = '\0';
		if (!strncmp(item, "guest=", 6))
			found = strdup(item + 6);
		else if (first && !strchr(item, '='))
			found = strdup(item); /* the implied key of -name is "guest" */
		first = false;
		if (!*p)
			break;
		p++; /* the separating comma */
	}
	free(item);
	return found;
}

/* systemd's unit-name escapes: "\x2d" is '-'. */
static void unescape_unit(char *s)
{
	char *w = s;

	for (const char *r = s; *r;) {
		unsigned int c;

		if (r[0] == '\\' && r[1] == 'x' && sscanf(r + 2, "%2x", &c) == 1 && c) {
			*w++ = (char)c;
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

/* libvirt's scope "machine-qemu\x2dN\x2dNAME.scope" in CGROUP: NAME, malloc()ed, or NULL. */
static char *libvirt_scope_name(const char *cgroup)
{
	const char *p = cgroup ? strstr(cgroup, "machine-qemu") : NULL;
	const char *end = p ? strstr(p, ".scope") : NULL;
	char *unit, *name = NULL;
	int skip = 0;

	if (!end)
		return NULL;
	unit = strndup(p + strlen("machine-"), end - p - strlen("machine-"));
	if (!unit)
		return NULL;
	unescape_unit(unit);
	/* "qemu-3-web-1": the domain id, then the name */
	if (sscanf(unit, "qemu-%*u-%n", &skip) == 0 && skip > 0 && unit[skip])
		name = strdup(unit + skip);
	free(unit);
	return name;
}

int vm_name_parse(const char *cmdline, size_t len, const char *cgroup, const char *comm,
		  struct vm_name *out)
{
	const char *v = NULL;

	memset(out, 0, sizeof(*out));
	if (!cmdline)
		len = 0;
	if (len) {
		v = arg_value(cmdline, len, "-name");
		if (!v)
			v = arg_value(cmdline, len, "--name");
	}
	if (v && (out->name = qemu_guest_name(v)) && !*out->name) {
		free(out->name); /* "-name guest=": no name given */
		out->name = NULL;
	}
	if (out->name) {
		out->from = "qemu -name";
		/* KubeVirt names its libvirt domains NAMESPACE_NAME (namespaces have no '_') */
		if (cgroup && strstr(cgroup, "kubepods")) {
			char *us = strchr(out->name, '_');

			if (us && us != out->name && us[1]) {
				out->namespace = strndup(out->name, us - out->name);
				memmove(out->name, us + 1, strlen(us + 1) + 1);
				out->from = "kubevirt (qemu -name NAMESPACE_NAME)";
			}
		}
	} else if ((out->name = libvirt_scope_name(cgroup))) {
		out->from = "libvirt machine scope";
	} else if (len && (v = arg_value(cmdline, len, "--id")) && *v) {
		out->name = strdup(v);
		out->from = "firecracker --id";
	} else {
		out->name = strdup(comm ? comm : "");
		out->from = "process name";
	}
	return out->name ? 0 : -ENOMEM;
}

/* PATH's contents, NUL-terminated, in *BUF (malloc()ed, grown as needed); its length, or -errno. */
static ssize_t read_file(const char *path, char **buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 4096;
	ssize_t n;

	*buf = NULL;
	if (fd < 0)
		return -errno;
	*buf = malloc(cap + 1);
	while (*buf && (n = read(fd, *buf + len, cap - len)) > 0) {
		char *more;

		len += (size_t)n;
		if (len < cap)
			continue;
		if (cap >= MAX_PROC_FILE)
			break; /* a command line this long is cut */
		cap *= 2;
		more = realloc(*buf, cap + 1);
		if (!more) {
			free(*buf);
			*buf = NULL;
		} else {
			*buf = more;
		}
	}
	close(fd);
	if (!*buf)
		return -ENOMEM;
	(*buf)[len] = '\0';
	return (ssize_t)len;
}

int vm_name_read(const char *proc_root, int pid, const char *comm, struct vm_name *out)
{
	char path[256], *cmdline, *cgroup;
	ssize_t len;
	int err;

	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, pid);
	len = read_file(path, &cmdline);
	snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root, pid);
	if (read_file(path, &cgroup) < 0) {
		free(cgroup);
		cgroup = NULL;
	}
	err = vm_name_parse(len > 0 ? cmdline : NULL, len > 0 ? (size_t)len : 0, cgroup, comm, out);
	free(cmdline);
	free(cgroup);
	return err;
}

char *vm_name_escape(const char *name)
{
	size_t n = 0;
	char *out, *w;

	for (const unsigned char *p = (const void *)name; *p; p++)
		n += *p < 0x20 || *p > 0x7e ? 4 : *p == '\\' ? 2 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	w = out;
	for (const unsigned char *p = (const void *)name; *p; p++) {
		if (*p < 0x20 || *p > 0x7e)
			w += sprintf(w, "\\x%02x", *p);
		else if (*p == '\\')
			w += sprintf(w, "\\\\");
		else
			*w++ = (char)*p;
	}
	*w = '\0';
	return out;
}

void vm_name_free(struct vm_name *v)
{
	free(v->name);
	free(v->namespace);
	memset(v, 0, sizeof(*v));
}
