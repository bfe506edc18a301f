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
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "kvm_stats.h"
#include "vm_stats_fds.h"

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

/*
 * A copy (a snapshot's) shares the descriptors and has values of its own;
 * whichever is closed last frees the descriptors (the sanitizer build
 * catches a double free or a use after the first close).
 */
static void copy_shares_descriptors(void **state)
{
	struct kvm_stats s, a, b;
	struct fake_file f;
	uint64_t v;

	(void)state;
	build(&f);
	assert_int_equal(kvm_stats_parse(&s, &f, sizeof(f)), 0);
	s.values[kvm_stats_find(&s, "pf_taken")->value_index] = 7;
	assert_int_equal(kvm_stats_copy(&a, &s), 0);
	assert_int_equal(kvm_stats_copy(&b, &a), 0);
	assert_ptr_equal(a.desc, s.desc);
	assert_ptr_equal(b.desc, s.desc);
	assert_string_equal(b.id, s.id);
	assert_int_equal(*s.desc_refs, 3);
	assert_int_equal(a.fd, -1);
	assert_ptr_not_equal(a.values, s.values);

	s.values[kvm_stats_find(&s, "pf_taken")->value_index] = 9; /* the live one reads on */
	kvm_stats_close(&s);
	assert_int_equal(kvm_stats_get(&a, "pf_taken", &v), 0);
	assert_int_equal(v, 7);
	kvm_stats_close(&a);
	assert_string_equal(b.id, "kvm-1234/vcpu-0");
	assert_int_equal(*b.desc_refs, 1);
	assert_int_equal(kvm_stats_get(&b, "pf_taken", &v), 0);
	assert_int_equal(v, 7);
	kvm_stats_close(&b);
}

/* A VM's vCPUs: one set of descriptors where theirs are the same, their own where not. */
static void vcpus_share_descriptors(void **state)
{
	struct kvm_stats v0, v1, other, copy;
	struct fake_file f;
	uint64_t v;

	(void)state;
	build(&f);
	assert_int_equal(kvm_stats_parse(&v0, &f, sizeof(f)), 0);
	strcpy(f.id, "kvm-1234/vcpu-1");
	assert_int_equal(kvm_stats_parse(&v1, &f, sizeof(f)), 0);
	assert_true(kvm_stats_share_descs(&v1, &v0));
	assert_ptr_equal(v1.desc, v0.desc);
	assert_int_equal(*v0.desc_refs, 2);
	assert_string_equal(v1.id, "kvm-1234/vcpu-1"); /* the id stays its own */
	assert_true(kvm_stats_share_descs(&v1, &v0));  /* already: nothing changes */
	assert_int_equal(*v0.desc_refs, 2);

	strcpy(f.desc[2].name, "max_mmu_page_hash_collisions");
	assert_int_equal(kvm_stats_parse(&other, &f, sizeof(f)), 0);
	assert_false(kvm_stats_share_descs(&other, &v0));
	assert_ptr_not_equal(other.desc, v0.desc);
	kvm_stats_close(&other);

	/* the first vCPU closes first: the others keep the names */
	assert_int_equal(kvm_stats_copy(&copy, &v1), 0);
	kvm_stats_close(&v0);
	assert_int_equal(*v1.desc_refs, 2);
	assert_int_equal(kvm_stats_get(&v1, "max_mmu_rmap_size", &v), 0);
	kvm_stats_close(&v1);
	assert_non_null(kvm_stats_find(&copy, "halt_wait_hist"));
	kvm_stats_close(&copy);
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

static void put_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/*
 * A directory laid out as KVM's debugfs lays out a VM's (one file per
 * statistic, counters 0644, instant values 0444, histograms' first bucket):
 * types from the modes, histograms left out, and a refresh is all or none.
 */
static void debugfs_directory(void **state)
{
	char dir[] = "/tmp/kvmmmu-debugfs.XXXXXX", sub[64], path[96];
	const struct kvm_stat_desc_info *d;
	struct kvm_stats s;
	uint64_t v;

	(void)state;
	assert_non_null(mkdtemp(dir));
	put_file(dir, "pf_taken", "1234\n", 0644);
	put_file(dir, "pages_4k", "17\n", 0444);
	put_file(dir, "max_mmu_page_hash_collisions", "3\n", 0644);
	put_file(dir, "halt_wait_hist", "9\n", 0644);
	put_file(dir, "mmu_rmaps_stat", "rmap_count 0 1 2\n", 0444); /* a table, no statistic */
	snprintf(sub, sizeof(sub), "%s/vcpu0", dir);
	assert_int_equal(mkdir(sub, 0755), 0); /* per-vCPU arch files: not statistics */

	assert_int_equal(kvm_stats_open_debugfs(&s, dir), 0);
	assert_true(s.debugfs);
	assert_int_equal(s.n_desc, 3);
	assert_int_equal(kvm_stats_get(&s, "pf_taken", &v), 0);
	assert_int_equal(v, 1234);
	d = kvm_stats_find(&s, "pf_taken");
	assert_int_equal(d->flags & KVM_STATS_TYPE_MASK, KVM_STATS_TYPE_CUMULATIVE);
	d = kvm_stats_find(&s, "pages_4k");
	assert_int_equal(d->flags & KVM_STATS_TYPE_MASK, KVM_STATS_TYPE_INSTANT);
	d = kvm_stats_find(&s, "max_mmu_page_hash_collisions");
	assert_int_equal(d->flags & KVM_STATS_TYPE_MASK, KVM_STATS_TYPE_PEAK);
	assert_null(kvm_stats_find(&s, "halt_wait_hist"));

	put_file(dir, "pf_taken", "2000\n", 0644);
	assert_int_equal(kvm_stats_refresh(&s), 0);
	assert_int_equal(kvm_stats_get(&s, "pf_taken", &v), 0);
	assert_int_equal(v, 2000);
	/* one file gone (the VM exited): nothing changes, not half */
	put_file(dir, "pf_taken", "3000\n", 0644);
	snprintf(path, sizeof(path), "%s/pages_4k", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(kvm_stats_refresh(&s), -ENOENT);
	assert_int_equal(kvm_stats_get(&s, "pf_taken", &v), 0);
	assert_int_equal(v, 2000);
	/* garbage in a file is an error, not a number */
	put_file(dir, "pages_4k", "many\n", 0444);
	assert_int_equal(kvm_stats_refresh(&s), -EIO);
	kvm_stats_close(&s);

	assert_int_equal(kvm_stats_open_debugfs(&s, "/nonexistent/kvm/1-2"), -ENOENT);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

/*
 * A VMM without stats fds, read through debugfs: once the VM is gone its
 * files are, and the last reading (at discovery, all zeros) is no count of
 * it. Every statistic is then unavailable, never that old value; a reading
 * that works again makes them available.
 */
static void vm_gone_is_unavailable(void **state)
{
	char dir[] = "/tmp/kvmmmu-debugfs.XXXXXX", path[96];
	struct vm_stats v = {.pid = 1, .have_vm = true, .vcpu_sums = true, .from_zero = true};
	uint64_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	put_file(dir, "pf_taken", "0\n", 0644);
	assert_int_equal(kvm_stats_open_debugfs(&v.vm, dir), 0);
	assert_int_equal(vm_stats_get(&v, -1, "pf_taken", &n), 0);
	assert_int_equal(n, 0);

	put_file(dir, "pf_taken", "40\n", 0644);
	assert_int_equal(vm_stats_refresh(&v), 0);
	assert_int_equal(vm_stats_get(&v, -1, "pf_taken", &n), 0);
	assert_int_equal(n, 40);

	snprintf(path, sizeof(path), "%s/pf_taken", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(vm_stats_refresh(&v), -ENOENT);
	assert_true(v.stale);
	assert_int_equal(vm_stats_get(&v, -1, "pf_taken", &n), -ESTALE);
	assert_int_equal(vm_stats_sum(&v, "pf_taken", &n), -ESTALE);

	put_file(dir, "pf_taken", "41\n", 0644);
	assert_int_equal(vm_stats_refresh(&v), 0);
	assert_int_equal(vm_stats_get(&v, -1, "pf_taken", &n), 0);
	assert_int_equal(n, 41);

	/* the VMM exits and its files are gone by the final reading */
	assert_int_equal(unlink(path), 0);
	vm_stats_freeze(&v);
	assert_true(v.frozen);
	assert_int_equal(vm_stats_get(&v, -1, "pf_taken", &n), -ESTALE);
	vm_stats_close(&v);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

/*
 * The real thing: a vCPU's stats on this kernel, found by name. Run with
 * --live by tests/integration/test_kvm_stats_live.sh, which runs where KVM
 * is (in a guest on a host without /dev/kvm); the unit run leaves it out.
 */
static void live_vcpu_stats(void **state)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC), vm, vcpu;
	struct kvm_stats s;
	uint64_t v;

	(void)state;
	assert_true(kvm >= 0);
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_descriptors),
		cmocka_unit_test(copy_shares_descriptors),
		cmocka_unit_test(vcpus_share_descriptors),
		cmocka_unit_test(rejects_truncated),
		cmocka_unit_test(debugfs_directory),
		cmocka_unit_test(vm_gone_is_unavailable),
	};
	const struct CMUnitTest live[] = {
		cmocka_unit_test(live_vcpu_stats),
	};

	if (argc > 1 && !strcmp(argv[1], "--live"))
		return cmocka_run_group_tests(live, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
