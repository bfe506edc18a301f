// SPDX-License-Identifier: GPL-2.0
/* Which of a process's VMs an event is: numbered in the order seen, whatever sees them first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "threads.h"

/*
 * A VMM that makes two VMs, and their memslots, before any vCPU runs: the
 * second VM's timeline event comes before any thread of the process was
 * news. It is that process's first VM seen, and stays so when the other
 * VM's vCPUs fault later; before, it was given index 1 while unknown and
 * its faults index 2.
 */
static void vm_events_before_threads(void **state)
{
	const __u64 vm_a = 0xffff888100000000ULL, vm_b = 0xffff888200000000ULL;
	struct kvmmmu_thread_id id = {.kvm = vm_a, .kvm_born = 10, .vcpu_id = 0};
	int pid = getpid();
	struct threads t;
	const int *pids;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(threads_vm_index(&t, pid, vm_b, 20), 1);
	/* the process is known now, by its name, and new to the session */
	assert_int_equal(threads_process_vms(&t, pid), 1);
	assert_non_null(threads_process_name(&t, pid));
	assert_int_equal(threads_take_new(&t, &pids), 1);
	assert_int_equal(pids[0], pid);
	/* the other VM's vCPU faults: the second VM seen */
	strcpy(id.comm, "CPU 0/KVM");
	strcpy(id.process, "qemu-system-x86");
	threads_note(&t, pid, pid + 1, &id, false);
	assert_int_equal(threads_vm_index(&t, pid, vm_a, 10), 2);
	assert_int_equal(threads_vm_index(&t, pid, vm_b, 20), 1);
	/* the same struct kvm made again later is another VM */
	assert_int_equal(threads_vm_index(&t, pid, vm_b, 30), 3);
	assert_int_equal(threads_take_new(&t, &pids), 0);
	threads_close(&t);
}

/* No process made for what names no VM, nor for a process that has exited. */
static void no_process_without_a_vm(void **state)
{
	struct threads t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(threads_vm_index(&t, getpid(), 0, 0), 1);
	assert_int_equal(threads_vm_index(&t, 0x3fffffff, 0xffff888100000000ULL, 1), 1);
	assert_int_equal(t.n_names, 0);
	threads_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vm_events_before_threads),
		cmocka_unit_test(no_process_without_a_vm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
