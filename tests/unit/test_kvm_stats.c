// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the KVM binary stats descriptor parser, on a built buffer and on this kernel. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <cmocka.h>

#include "kvm_stats.h"

#define NAME_SIZE 48

struct fake_desc {
	struct kvm_stats_desc d;
	char name[NAME_SIZE];
};

struct fake_file {
	struct kvm_stats_header h;
	char id[NAME_SIZE];
	struct fake_desc desc[3];
};

/* Three descriptors in an order that differs from their data offsets. */
static void build(struct fake_file *f)
{
	memset(f, 0, sizeof(*f));
	f->h.name_size = NAME_SIZE;
	f->h.num_desc = 3;
	f->h.id_offset = offsetof(struct fake_file, id);
	f->h.desc_offset = offsetof(struct fake_file, desc);
	f->h.data_offset = sizeof(*f);
	strcpy(f->id, "kvm-1234/vcpu-0");
	f->desc[0].d = (struct kvm_stats_desc){
		.flags = KVM_STATS_TYPE_CUMULATIVE, .size = 1, .offset = 16};
	strcpy(f->desc[0].name, "pf_taken");
	f->desc[1].d =
		(struct kvm_stats_desc){.flags = KVM_STATS_TYPE_LOG_HIST, .size = 2, .offset = 0};
	strcpy(f->desc[1].name, "halt_wait_hist");
	f->desc[2].d =
		(struct kvm_stats_desc){.flags = KVM_STATS_TYPE_PEAK, .size = 1, .offset = 24};
	strcpy(f->desc[2].name, "max_mmu_rmap_size");
}

static void parses_descriptors(void **state)
{
	struct fake_file f;
	struct kvm_stats s;

	(void)state;
	build(&f);
	assert_int_equal(kvm_stats_parse(&s, &f, sizeof(f)), 0);
	assert_string_equal(s.id, "kvm-1234/vcpu-0");
	assert_int_equal(s.n_desc, 3);
	assert_int_equal(s.n_values, 4);
	assert_int_equal(s.data_len, 32);
	assert_int_equal(kvm_stats_find(&s, "halt_wait_hist")->size, 2);
	assert_int_equal(kvm_stats_find(&s, "halt_wait_hist")->value_index, 1);
	assert_int_equal(kvm_stats_find(&s, "max_mmu_rmap_size")->offset, 24);
	assert_string_equal(kvm_stats_type_name(kvm_stats_find(&s, "pf_taken")->flags),
			    "cumulative");
	assert_null(kvm_stats_find(&s, "pf_fast"));
	kvm_stats_close(&s);
}

static void rejects_truncated(void **state)
{
	struct fake_file f;
	struct kvm_stats s;

	(void)state;
	build(&f);
	assert_int_equal(kvm_stats_parse(&s, &f, sizeof(f) - NAME_SIZE), -EINVAL);
	assert_int_equal(kvm_stats_parse(&s, &f, sizeof(f.h) - 1), -EINVAL);
	build(&f);
	f.h.num_desc = 1000;
	assert_int_equal(kvm_stats_parse(&s, &f, sizeof(f)), -EINVAL);
	build(&f);
	f.h.name_size = 0;
	assert_int_equal(kvm_stats_parse(&s, &f, sizeof(f)), -EINVAL);
	build(&f);
	f.desc[1].d.size = 0;
	assert_int_equal(kvm_stats_parse(&s, &f, sizeof(f)), -EINVAL);
}

/* The real thing: a vCPU's stats on this kernel, found by name. */
static void live_vcpu_stats(void **state)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC), vm, vcpu;
	struct kvm_stats s;
	uint64_t v;

	(void)state;
	if (kvm < 0) {
		printf("SKIP: /dev/kvm: %s\n", strerror(errno));
		skip();
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	assert_true(vm >= 0);
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	assert_true(vcpu >= 0);
	assert_int_equal(kvm_stats_open_kvm_fd(&s, vcpu), 0);
	assert_int_equal(kvm_stats_get(&s, "pf_taken", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(kvm_stats_get(&s, "no_such_stat", &v), -ENOENT);
	assert_non_null(kvm_stats_find(&s, "pf_fixed"));
	kvm_stats_close(&s);
	assert_int_equal(kvm_stats_open_kvm_fd(&s, vm), 0);
	assert_non_null(kvm_stats_find(&s, "remote_tlb_flush"));
	kvm_stats_close(&s);
	close(vcpu);
	close(vm);
	close(kvm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_descriptors),
		cmocka_unit_test(rejects_truncated),
		cmocka_unit_test(live_vcpu_stats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
