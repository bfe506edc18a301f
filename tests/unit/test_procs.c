// SPDX-License-Identifier: GPL-2.0
/* The -p matcher and the /proc vCPU map, on a fake /proc tree. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "procs.h"
#include "vcpu_map.h"

static char root[64]; /* short, so that paths under it always fit */

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void link_fd(int pid, int fd, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/fd", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/fd/%d", root, pid, fd);
	assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/kvmmmu-fakeproc.XXXXXX");
	assert_non_null(mkdtemp(root));
	/* a QEMU VM: vCPU threads named "CPU N/KVM", vCPU 1 blocked in KVM_RUN on fd 12 */
	put("100/comm", "qemu-system-x86\n");
	put("100/task/100/comm", "qemu-system-x86\n");
	put("100/task/100/syscall", "7 0x55d 0x3 0x0 0x0 0x0 0x0 0x7ffc 0x7f00\n");
	put("100/task/101/comm", "CPU 0/KVM\n");
	put("100/task/101/syscall", "running\n");
	put("100/task/102/comm", "CPU 1/KVM\n");
	put("100/task/102/syscall", "16 0xc 0xae80 0x0 0x0 0x0 0x0 0x7ffc 0x7f00\n");
	link_fd(100, 10, "anon_inode:kvm-vm");
	link_fd(100, 11, "anon_inode:kvm-vcpu:0");
	link_fd(100, 12, "anon_inode:kvm-vcpu:1");
	/* a Firecracker-like VMM: "fc_vcpu N" names, only KVM_RUN sightings tell */
	put("200/comm", "firecracker\n");
	put("200/task/201/comm", "fc_vcpu 0\n");
	put("200/task/201/syscall", "16 0x1a 0xae80 0x0 0x0 0x0 0x0 0x7ffc 0x7f00\n");
	put("200/task/202/comm", "fc_vcpu 1\n");
	put("200/task/202/syscall", "16 0x1b 0xae80 0x0 0x0 0x0 0x0 0x7ffc 0x7f00\n");
	put("200/task/203/comm", "kvm-nx-lpage-re\n");
	put("200/task/203/syscall", "16 0x1b 0xae80 0x0 0x0 0x0 0x0 0x7ffc 0x7f00\n");
	link_fd(200, 26, "anon_inode:kvm-vcpu:7");
	link_fd(200, 27, "anon_inode:kvm-vcpu:3");
	/* QEMU with -smp 6,sockets=2,cores=3: APIC ids (KVM's vCPU ids) 0-2 and 4-6 */
	put("400/comm", "smp6-vmm\n"); /* named apart from the qemu above */
	put("400/task/403/comm", "CPU 3/KVM\n");
	put("400/task/403/syscall", "running\n");
	put("400/task/406/comm", "CPU 5/KVM\n");
	put("400/task/406/syscall", "running\n");
	put("400/task/409/comm", "CPU 6/KVM\n"); /* no such vCPU (yet): unknown */
	put("400/task/409/syscall", "running\n");
	for (int i = 0; i < 6; i++) {
		char target[64];

		snprintf(target, sizeof(target), "anon_inode:kvm-vcpu:%d", i < 3 ? i : i + 1);
		link_fd(400, 20 + 5 - i, target); /* fds in no particular order */
	}
	/* not a VM */
	put("300/comm", "qemu-img\n");
	put("self/comm", "kvmmmu-hist\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void spec_matches_like_pgrep(void **state)
{
	struct proc_spec s;

	(void)state;
	assert_int_equal(proc_spec_init(&s, "qemu"), 0);
	assert_true(proc_spec_matches(&s, 1, "qemu-system-x86"));
	assert_true(proc_spec_matches(&s, 1, "qemu-kvm"));
	assert_false(proc_spec_matches(&s, 1, "firecracker"));
	proc_spec_free(&s);
	assert_int_equal(proc_spec_init(&s, "^qemu-kvm$"), 0);
	assert_false(proc_spec_matches(&s, 1, "qemu-system-x86"));
	assert_true(proc_spec_matches(&s, 1, "qemu-kvm"));
	proc_spec_free(&s);
	assert_int_equal(proc_spec_init(&s, "4242"), 0);
	assert_int_equal(s.pid, 4242);
	assert_true(proc_spec_matches(&s, 4242, "anything"));
	assert_false(proc_spec_matches(&s, 4243, "anything"));
	proc_spec_free(&s);
	assert_int_equal(proc_spec_init(&s, "qemu("), -EINVAL);
	proc_spec_free(&s);
}

/* Written as a PID is a PID or refused, never a name that matches comms by their digits. */
static void pid_out_of_range_is_no_name(void **state)
{
	static const char *const bad[] = {"0",		"-1",	      "-0",
					  "4294967297", "2147483648", "99999999999999999999999"};
	struct proc_spec s;
	char why[160];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(proc_spec_init(&s, bad[i]), -ERANGE);
		assert_null(s.regex);
		proc_spec_free(&s);
		proc_spec_why(bad[i], why, sizeof(why));
		assert_string_equal(why, "not a valid PID (a PID is from 1 to 2147483647)");
	}
	assert_int_equal(proc_spec_init(&s, "2147483647"), 0);
	assert_int_equal(s.pid, 2147483647);
	proc_spec_free(&s);
	/* a name that starts with a letter or holds digits stays a name */
	assert_int_equal(proc_spec_init(&s, "qemu-1"), 0);
	assert_non_null(s.regex);
	assert_int_equal(s.pid, 0);
	proc_spec_free(&s);
	assert_int_equal(proc_spec_init(&s, "vm-1"), 0);
	assert_int_equal(s.pid, 0);
	proc_spec_free(&s);
	proc_spec_why("qemu(", why, sizeof(why));
	assert_non_null(strstr(why, "not a valid name pattern"));
	proc_spec_why("", why, sizeof(why));
	assert_string_equal(why, "an empty name would match every process");
}

static void finds_processes(void **state)
{
	struct proc_spec s[2];
	int pids[8], n;

	(void)state;
	assert_int_equal(proc_spec_init(&s[0], "qemu"), 0);
	n = procs_find(root, s, 1, 0, pids, 8);
	assert_int_equal(n, 2); /* qemu-system-x86 and qemu-img, as pgrep would */
	n = procs_find(root, s, 1, 300, pids, 8);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], 100);
	assert_int_equal(proc_spec_init(&s[1], "200"), 0);
	n = procs_find(root, s, 2, 300, pids, 8);
	assert_int_equal(n, 2);
	assert_true(proc_is_vmm(root, 100));
	assert_false(proc_is_vmm(root, 300));
	/* of those, the ones with a VM open; with no spec, every one (qemu-img has none) */
	n = procs_find_vmms(root, s, 1, 0, pids, 8);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], 100);
	n = procs_find_vmms(root, NULL, 0, 0, pids, 8);
	for (int i = 0; i < n; i++)
		assert_true(proc_is_vmm(root, pids[i]));
	assert_true(n >= 1);
	proc_spec_free(&s[0]);
	proc_spec_free(&s[1]);
}

static void maps_threads_to_vcpus(void **state)
{
	struct vcpu_map m = {};
	int ids[8];

	(void)state;
	assert_int_equal(vcpu_map_scan(&m, root, 100), 0);
	assert_int_equal(vcpu_map_scan(&m, root, 200), 0);
	assert_int_equal(vcpu_map_lookup(&m, 100, 101), 0); /* by name */
	assert_int_equal(vcpu_map_lookup(&m, 100, 102), 1); /* by KVM_RUN */
	assert_int_equal(vcpu_map_lookup(&m, 100, 100), -1);
	assert_int_equal(vcpu_map_lookup(&m, 200, 201), 7); /* fd 26 is vCPU 7, not "0" */
	assert_int_equal(vcpu_map_lookup(&m, 200, 202), 3);
	assert_int_equal(vcpu_map_lookup(&m, 200, 203), -1); /* KVM's worker thread */
	/* once seen in KVM_RUN, a thread keeps its vCPU when it runs again */
	put("200/task/201/syscall", "running\n");
	assert_int_equal(vcpu_map_scan(&m, root, 200), 0);
	assert_int_equal(vcpu_map_lookup(&m, 200, 201), 7);
	assert_int_equal(vcpu_fds(root, 200, ids, 8), 2);
	assert_int_equal(vcpu_map_scan(&m, root, 999), -ENOENT);
	/* QEMU's cpu_index, translated to the APIC id KVM knows the vCPU by */
	assert_int_equal(vcpu_map_scan(&m, root, 400), 0);
	assert_int_equal(vcpu_map_lookup(&m, 400, 403), 4);
	assert_int_equal(vcpu_map_lookup(&m, 400, 406), 6);
	assert_int_equal(vcpu_map_lookup(&m, 400, 409), -1);
	vcpu_map_free(&m);
}

/* Real VMMs' vCPU thread names, and names that only look like them. */
static void vcpu_ids_from_thread_names(void **state)
{
	static const struct {
		const char *comm;
		int vcpu;
	} cases[] = {
		{"CPU 0/KVM", 0},
		{"CPU 63/KVM", 63}, /* QEMU */
		{"fc_vcpu 0", 0},
		{"fc_vcpu 17", 17}, /* Firecracker */
		{"vcpu0", 0},
		{"vcpu12", 12}, /* cloud-hypervisor */
		{"crosvm_vcpu3", 3},
		{"crosvm_vcpu0", 0}, /* crosvm */
		{"CPU 0/KVMx", -1},
		{"CPU /KVM", -1},
		{"CPU -1/KVM", -1},
		{"CPU +1/KVM", -1},
		{"cpu 0/kvm", -1},
		{"fc_vcpu", -1},
		{"fc_vcpu 1a", -1},
		{"fc_vcpu  1", -1},
		{"vcpu 1", -1},
		{"vcpu-1", -1},
		{"vcpu", -1},
		{"vcpu1x", -1},
		{"qemu-system-x86", -1},
		{"kvm-nx-lpage-re", -1},
		{"", -1},
		{"vcpu9999999", -1}, /* not a plausible id */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = vcpu_from_thread_name(cases[i].comm);

		if (got != cases[i].vcpu)
			fail_msg("'%s': vCPU %d, want %d", cases[i].comm, got, cases[i].vcpu);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pid_out_of_range_is_no_name),
		cmocka_unit_test(spec_matches_like_pgrep),
		cmocka_unit_test(finds_processes),
		cmocka_unit_test(maps_threads_to_vcpus),
		cmocka_unit_test(vcpu_ids_from_thread_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
