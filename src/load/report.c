// SPDX-License-Identifier: GPL-2.0
/* Phase timings and KVM statistics: a human report plus optional CSV rows. */
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "log.h"
#include "sysinfo.h"

#define COMM "kvmmmu-load"

static struct csv_writer *csv;
static const char *vm_name = COMM;
static bool csv_failed;
static unsigned int vm_index = 1;

void report_open(struct csv_writer *w, const char *name)
{
	csv = w;
	if (name)
		vm_name = name;
}

void report_vm(unsigned int index)
{
	vm_index = index;
}

static void csv_row(int vcpu, const char *source, const char *metric, const char *le,
		    enum csv_value_kind kind, uint64_t u, double f)
{
	struct csv_row row = {
		.ts = sysinfo_now(),
		.pid = getpid(),
		.comm = COMM,
		.vcpu = vcpu,
		.source = source,
		.metric = metric,
		.le = le,
		.kind = kind,
		.u64 = u,
		.f64 = f,
		.vm = vm_name,
		.vm_index = (int)vm_index,
	};

	/* After a failed write, stop: main reports it once, at close. */
	if (!csv || csv_failed)
		return;
	if (csv_write_row(csv, &row))
		csv_failed = true;
}

void report_time(const char *what, const char *metric, double secs)
{
	fprintf(load_out, "%s time: %.9fs\n", what, secs);
	csv_row(CSV_NO_VCPU, "load", metric, NULL, CSV_F64, 0, secs);
}

void report_count(const char *what, const char *metric, uint64_t value)
{
	if (what)
		fprintf(load_out, "%s: %llu\n", what, (unsigned long long)value);
	csv_row(CSV_NO_VCPU, "load", metric, NULL, CSV_U64, value, 0);
}

const char *report_size(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	unsigned int u = 0;

	while (u < 4 && bytes >= 1024 && !(bytes % 1024)) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)bytes, units[u]);
	return buf;
}

static bool is_hist(const struct kvm_stat_desc_info *d)
{
	uint32_t type = d->flags & KVM_STATS_TYPE_MASK;

	return type == KVM_STATS_TYPE_LINEAR_HIST || type == KVM_STATS_TYPE_LOG_HIST;
}

static uint64_t stat_sum(const struct kvm_stats *s, const struct kvm_stat_desc_info *d)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < d->size; i++)
		sum += s->values[d->value_index + i];
	return sum;
}

/* Sum of a named statistic over all vCPUs, freshly read; 0 when the kernel lacks it. */
uint64_t report_vcpu_stat_sum(struct vm *vm, const char *name)
{
	uint64_t sum = 0, v;

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *c = &vm->vcpus[i];

		if (c->have_stats && !kvm_stats_refresh(&c->stats) &&
		    !kvm_stats_get(&c->stats, name, &v))
			sum += v;
	}
	return sum;
}

/*
 * Inclusive upper bound of a bucket, for integer samples. KVM puts value v in
 * bucket v / bucket_size (linear) or fls64(v) (log); the last bucket also
 * takes everything above, which is why the caller folds it into "+Inf".
 */
static uint64_t bucket_le(const struct kvm_stat_desc_info *d, unsigned int i)
{
	if ((d->flags & KVM_STATS_TYPE_MASK) == KVM_STATS_TYPE_LINEAR_HIST)
		return (uint64_t)(i + 1) * d->bucket_size - 1;
	return i >= 64 ? UINT64_MAX : (1ULL << i) - 1;
}

/* Histograms as Prometheus does them: cumulative counts per "le" bound. */
static void csv_stat(int vcpu, const struct kvm_stats *s, const struct kvm_stat_desc_info *d)
{
	uint64_t cum = 0;
	char le[32];

	if (!is_hist(d)) {
		csv_row(vcpu, "kvm_stats", d->name, NULL, CSV_U64, stat_sum(s, d), 0);
		return;
	}
	for (unsigned int i = 0; i + 1 < d->size; i++) {
		cum += s->values[d->value_index + i];
		snprintf(le, sizeof(le), "%llu", (unsigned long long)bucket_le(d, i));
		csv_row(vcpu, "kvm_stats", d->name, le, CSV_U64, cum, 0);
	}
	cum += s->values[d->value_index + d->size - 1];
	csv_row(vcpu, "kvm_stats", d->name, "+Inf", CSV_U64, cum, 0);
}

static void print_vcpu_table(struct vm *vm)
{
	const struct kvm_stats *first = &vm->vcpus[0].stats;
	int name_w = 4;

	for (size_t k = 0; k < first->n_desc; k++) {
		int w = strlen(first->desc[k].name) + (is_hist(&first->desc[k]) ? 7 : 0);

		if (w > name_w)
			name_w = w;
	}
	fprintf(load_out, "\nKVM vCPU statistics (histograms: sum of buckets):\n%-*s", name_w,
		"name");
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		char col[16];

		snprintf(col, sizeof(col), "vcpu%u", i);
		fprintf(load_out, " %12s", col);
	}
	fputc('\n', load_out);
	/* vCPUs of one VM share the descriptor set, so rows follow vCPU 0's. */
	for (size_t k = 0; k < first->n_desc; k++) {
		const struct kvm_stat_desc_info *d0 = &first->desc[k];

		if (is_hist(d0))
			fprintf(load_out, "%s (hist)%*s", d0->name,
				name_w - (int)strlen(d0->name) - 7, "");
		else
			fprintf(load_out, "%-*s", name_w, d0->name);
		for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
			const struct kvm_stats *s = &vm->vcpus[i].stats;
			const struct kvm_stat_desc_info *d = kvm_stats_find(s, d0->name);

			if (vm->vcpus[i].have_stats && d)
				fprintf(load_out, " %12llu", (unsigned long long)stat_sum(s, d));
			else
				fprintf(load_out, " %12s", "-");
		}
		fputc('\n', load_out);
	}
}

static void print_vm_table(struct vm *vm)
{
	int name_w = 4;

	for (size_t k = 0; k < vm->stats.n_desc; k++)
		if ((int)strlen(vm->stats.desc[k].name) + 7 > name_w)
			name_w = strlen(vm->stats.desc[k].name) + 7;
	fprintf(load_out, "\nKVM VM statistics:\n");
	for (size_t k = 0; k < vm->stats.n_desc; k++) {
		const struct kvm_stat_desc_info *d = &vm->stats.desc[k];
		char name[256];

		snprintf(name, sizeof(name), "%s%s", d->name, is_hist(d) ? " (hist)" : "");
		fprintf(load_out, "%-*s %12llu\n", name_w, name,
			(unsigned long long)stat_sum(&vm->stats, d));
	}
}

/* Every statistic, looked up by name; vCPU rows first, then the VM's. */
void report_kvm_stats(struct vm *vm)
{
	bool any_vcpu = false;

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		if (v->have_stats && kvm_stats_refresh(&v->stats))
			v->have_stats = false;
		any_vcpu |= v->have_stats;
	}
	if (vm->have_stats && kvm_stats_refresh(&vm->stats))
		vm->have_stats = false;
	if (!any_vcpu && !vm->have_stats) {
		fprintf(load_out, "\nKVM statistics: %s\n",
			vm->no_stats_fds ? "none (--no-stats-fds)"
					 : "not available (KVM_GET_STATS_FD, Linux 5.14+)");
		return;
	}
	if (any_vcpu && vm->vcpus[0].have_stats)
		print_vcpu_table(vm);
	if (vm->have_stats)
		print_vm_table(vm);

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		for (size_t k = 0; v->have_stats && k < v->stats.n_desc; k++)
			csv_stat(v->id, &v->stats, &v->stats.desc[k]);
	}
	for (size_t k = 0; vm->have_stats && k < vm->stats.n_desc; k++)
		csv_stat(CSV_NO_VCPU, &vm->stats, &vm->stats.desc[k]);
}
