// SPDX-License-Identifier: GPL-2.0
/* VM names from real VMMs' command lines and cgroups (written out as fixtures here). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vm_name.h"

/* ARGV as /proc/PID/cmdline has it: NUL-separated, NUL-terminated. */
static size_t cmdline(char *buf, size_t cap, const char *const *argv)
{
	size_t n = 0;

	for (; *argv; argv++) {
		size_t k = strlen(*argv) + 1;

		assert_true(n + k <= cap);
		memcpy(buf + n, *argv, k);
		n += k;
	}
	return n;
}

static void check(const char *const *argv, const char *cgroup, const char *comm,
		  const char *want_name, const char *want_ns, const char *want_from)
{
	char buf[8192];
	size_t len = argv ? cmdline(buf, sizeof(buf), argv) : 0;
	struct vm_name v;

	assert_int_equal(vm_name_parse(argv ? buf : NULL, len, cgroup, comm, &v), 0);
	assert_string_equal(v.name, want_name);
	if (want_ns)
		assert_string_equal(v.namespace, want_ns);
	else
		assert_null(v.namespace);
	assert_string_equal(v.from, want_from);
	vm_name_free(&v);
}

/* libvirt 9 on Debian 12: the domain name in -name guest=..., and its machine scope. */
static void libvirt_qemu(void **state)
{
	static const char *const argv[] = {
		"/usr/bin/qemu-system-x86_64",
		"-name",
		"guest=web-1,debug-threads=on",
		"-S",
		"-object",
		"{\"qom-type\":\"secret\",\"id\":\"masterKey0\",\"format\":\"raw\","
		"\"file\":\"/var/lib/libvirt/qemu/domain-3-web-1/master-key.aes\"}",
		"-machine",
		"pc-q35-7.2,usb=off,vmport=off,dump-guest-core=off,memory-backend=pc.ram",
		"-accel",
		"kvm",
		"-cpu",
		"host,migratable=on",
		"-m",
		"2048",
		"-uuid",
		"5a9c1f4e-3b0d-4d59-9d7e-2f1c3e0b7a11",
		"-no-user-config",
		"-nodefaults",
		NULL,
	};

	(void)state;
	check(argv, "0::/machine.slice/machine-qemu\\x2d3\\x2dweb\\x2d1.scope/libvirt/emulator\n",
	      "qemu-system-x86", "web-1", NULL, "qemu -name");
}

/* QEMU by hand: -name NAME, with ",," for a comma in it. */
static void qemu_by_hand(void **state)
{
	static const char *const plain[] = {
		"qemu-system-x86_64", "-enable-kvm", "-m",	"1G", "-name",
		"db,,primary",	      "-kernel",     "vmlinuz", NULL};
	static const char *const long_opt[] = {"qemu-system-x86_64", "--name",
					       "process=qemu-db,guest=db-2", NULL};
	static const char *const no_value[] = {"qemu-system-x86_64", "-m", "1G", "-name", NULL};
	static const char *const empty[] = {"qemu-system-x86_64", "-name", "guest=", NULL};

	(void)state;
	check(plain, "0::/user.slice/user-1000.slice/session-2.scope\n", "qemu-system-x86",
	      "db,primary", NULL, "qemu -name");
	check(long_opt, NULL, "qemu-system-x86", "db-2", NULL, "qemu -name");
	check(no_value, NULL, "qemu-system-x86", "qemu-system-x86", NULL, "process name");
	check(empty, NULL, "qemu-system-x86", "qemu-system-x86", NULL, "process name");
}

/* KubeVirt: virt-launcher's libvirt names the domain NAMESPACE_VMI. */
static void kubevirt(void **state)
{
	static const char *const argv[] = {"/usr/libexec/qemu-kvm",
					   "-name",
					   "guest=default_vmi-fedora,debug-threads=on",
					   "-S",
					   "-machine",
					   "pc-q35-rhel9.2.0,usb=off,dump-guest-core=off",
					   NULL};

	(void)state;
	check(argv,
	      "0::/kubepods.slice/kubepods-burstable.slice/"
	      "kubepods-burstable-pod6f0e6c7b_2d1a_4e5f_9a3b_8c7d6e5f4a3b.slice/"
	      "cri-containerd-0123456789abcdef.scope\n",
	      "qemu-kvm", "vmi-fedora", "default", "kubevirt (qemu -name NAMESPACE_NAME)");
}

/* Firecracker's --id; cloud-hypervisor has no name option: the process name. */
static void other_vmms(void **state)
{
	static const char *const fc[] = {
		"/usr/bin/firecracker",	       "--id", "vm-42", "--api-sock",
		"/run/firecracker-vm-42.sock", NULL};
	static const char *const fc_eq[] = {"firecracker", "--id=vm-43", "--no-api", NULL};
	static const char *const ch[] = {
		"cloud-hypervisor", "--api-socket", "/tmp/ch.sock", "--kernel",
		"vmlinux",	    "--cpus",	    "boot=2",	    NULL};

	(void)state;
	check(fc, NULL, "firecracker", "vm-42", NULL, "firecracker --id");
	check(fc_eq, NULL, "firecracker", "vm-43", NULL, "firecracker --id");
	check(ch, NULL, "cloud-hyperviso", "cloud-hyperviso", NULL, "process name");
	/* libvirt's scope alone (a wrapper that hides -name): the name from the unit */
	check(NULL, "12:cpu,cpuacct:/machine.slice/machine-qemu\\x2d17\\x2dmail\\x2dserver.scope\n",
	      "qemu-system-x86", "mail-server", NULL, "libvirt machine scope");
	/* no command line at all (a process that has exited) */
	check(NULL, NULL, "kvmmmu-load", "kvmmmu-load", NULL, "process name");
}

/* Names with anything in them: whole, and escaped for the terminal. */
static void bad_names(void **state)
{
	char big[4096 + 8], *esc;
	const char *argv[] = {"qemu-system-x86_64", "-name", big, NULL};
	char buf[8192];
	struct vm_name v;

	(void)state;
	memcpy(big, "guest=", 6);
	memset(big + 6, 'a', 4096);
	big[6 + 4096] = '\0';
	assert_int_equal(vm_name_parse(buf, cmdline(buf, sizeof(buf), argv), NULL, "q", &v), 0);
	assert_int_equal(strlen(v.name), 4096); /* never cut */
	vm_name_free(&v);

	esc = vm_name_escape("caf\xc3\xa9 \"x\"\\y\n");
	assert_string_equal(esc, "caf\\xc3\\xa9 \"x\"\\\\y\\x0a");
	free(esc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(libvirt_qemu), cmocka_unit_test(qemu_by_hand),
		cmocka_unit_test(kubevirt),	cmocka_unit_test(other_vmms),
		cmocka_unit_test(bad_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
