// SPDX-License-Identifier: GPL-2.0
/*
 * Guest page tables, descriptor tables and register state for kvmmmu-load.
 *
 * The guest is put straight into its mode at CPL3 with KVM_SET_SREGS, no
 * firmware and no CPL0 code: on PVM hosts CPL0 guest code is emulated and
 * takes no MMU faults, while CPL3 code runs natively. The default is 64-bit
 * long mode; --guest-mode picks 32-bit protected mode with PAE paging,
 * 2-level paging (4 MiB pages) or paging off, whose faults reach other page
 * fault handlers of KVM's shadow MMU (PVM hosts run long-mode code only).
 * The one exception, cr0wp, runs at CPL0 because only CPL0 may write CR0:
 * each toggle of CR0.WP is an MMU role change (where the kernel runs CPL0
 * guest code natively, as on SVM and VMX; PVM emulates it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "load.h"
#include "log.h"

#define SIZE_2M (2ULL << 20)
#define SIZE_1G (1ULL << 30)
#define SIZE_512G (512ULL << 30)

/*
 * Slot 0 layout from GPA 0: GDT, TSS and PML4 pages, one code page per vCPU,
 * then the other page tables. Private code pages make the code fetch fault
 * exactly once on every vCPU instead of once on whichever vCPU gets there
 * first, so that pf_taken is pages + 1 on each vCPU, without races. They are
 * CODE_STRIDE apart because a shadow-MMU fault also maps the host-present
 * pages of its aligned group of PTE_PREFETCH_NUM (8) pages: code pages in
 * one group would be mapped by whichever vCPU faulted first.
 */
#define GDT_GPA 0x0000ULL
#define TSS_GPA 0x1000ULL
#define PML4_GPA 0x2000ULL
#define CODE_STRIDE 0x10000ULL
#define CODE_GPA CODE_STRIDE

/*
 * The TSS carries an I/O permission bitmap that opens LOAD_PORT alone; the
 * bitmap's last byte is all ones, as the SDM asks, since the CPU reads two.
 */
#define TSS_IOMAP_BASE 0x68
#define TSS_LIMIT (TSS_IOMAP_BASE + LOAD_PORT / 8 + 1)

#define SEL_USER_CODE (0x08 | 3)
#define SEL_USER_DATA (0x10 | 3)
#define SEL_KERNEL_CODE 0x28
#define SEL_KERNEL_DATA 0x30
#define SEL_TSS 0x18
#define GDT_ENTRIES 7 /* null, user code, data, TSS (two slots), kernel code, data */

#define PTE_P (1ULL << 0)
#define PTE_RW (1ULL << 1)
#define PTE_US (1ULL << 2)
#define PTE_A (1ULL << 5)
#define PTE_D (1ULL << 6)
#define PTE_PS (1ULL << 7)
#define PTE_ADDR_MASK 0x000ffffffffff000ULL
/* Accessed and Dirty preset, so KVM's walker never has to write them back. */
#define PTE_TABLE (PTE_P | PTE_RW | PTE_US | PTE_A)
#define PTE_LEAF_2M (PTE_P | PTE_RW | PTE_US | PTE_A | PTE_D | PTE_PS)
#define SIZE_4M (4ULL << 20)

#define CR0_PE (1ULL << 0)
#define CR0_NE (1ULL << 5)
#define CR0_WP (1ULL << 16)
#define CR0_PG (1ULL << 31)
#define CR4_PSE (1ULL << 4)
#define CR4_PAE (1ULL << 5)
#define EFER_LME (1ULL << 8)
#define EFER_LMA (1ULL << 10)
#define RFLAGS_FIXED (1ULL << 1)
#define RFLAGS_IOPL3 (3ULL << 12)

extern const char guest_code_start[], guest_code_end[];
extern const char guest_code32_start[], guest_code32_end[];
extern const char guest_code_cr0wp_start[], guest_code_cr0wp_end[];

static const char *const mode_names[] = {
	[GUEST_LONG] = "long",		 [GUEST_PAE] = "pae",	  [GUEST_32BIT] = "32bit",
	[GUEST_NONPAGING] = "nonpaging", [GUEST_CR0WP] = "cr0wp",
};

const char *guest_mode_name(enum guest_mode mode)
{
	return mode_names[mode];
}

int guest_mode_parse(const char *s, enum guest_mode *mode)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (!strcmp(s, mode_names[i])) {
			*mode = (enum guest_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

static uint64_t span_count(uint64_t start, uint64_t size, uint64_t unit)
{
	return (start + size + unit - 1) / unit - start / unit;
}

static uint64_t code_gpa(int vcpu_id)
{
	return CODE_GPA + vcpu_id * CODE_STRIDE;
}

static uint64_t first_table_gpa(unsigned int nr_vcpus)
{
	return code_gpa(nr_vcpus);
}

/*
 * Slot 0 size: fixed pages plus the worst case of tables for the two mapped
 * ranges, and a PDPT and a PD for --mmio's page.
 */
uint64_t guest_sys_size(unsigned int nr_vcpus, uint64_t test_gpa, uint64_t test_size)
{
	uint64_t tables = 2 * (1 + span_count(test_gpa, test_size, SIZE_512G) +
			       span_count(test_gpa, test_size, SIZE_1G)) +
			  2;

	return first_table_gpa(nr_vcpus) + tables * LOAD_PAGE_SIZE;
}

struct pt_builder {
	uint8_t *mem;	   /* host view of slot 0 */
	uint64_t next_gpa; /* bump allocator for table pages */
	uint64_t limit;
};

static uint64_t *pt_table(struct pt_builder *b, uint64_t *entry)
{
	if (!(*entry & PTE_P)) {
		if (b->next_gpa + LOAD_PAGE_SIZE > b->limit)
			abort(); /* guest_sys_size() is wrong */
		*entry = b->next_gpa | PTE_TABLE;
		b->next_gpa += LOAD_PAGE_SIZE;
	}
	return (uint64_t *)(b->mem + (*entry & PTE_ADDR_MASK));
}

/* Identity-maps [gpa, gpa + size) with user-accessible, writable 2 MiB pages. */
static void pt_map_2m(struct pt_builder *b, uint64_t gpa, uint64_t size)
{
	uint64_t *pml4 = (uint64_t *)(b->mem + PML4_GPA);

	for (uint64_t a = gpa & ~(SIZE_2M - 1); a < gpa + size; a += SIZE_2M) {
		uint64_t *pdpt = pt_table(b, &pml4[(a >> 39) & 511]);
		uint64_t *pd = pt_table(b, &pdpt[(a >> 30) & 511]);

		pd[(a >> 21) & 511] = a | PTE_LEAF_2M;
	}
}

/* PAE: the PDPT (at PML4_GPA) has four entries, whose RW/US bits are reserved. */
static void pt_map_pae(struct pt_builder *b, uint64_t gpa, uint64_t size)
{
	uint64_t *pdpt = (uint64_t *)(b->mem + PML4_GPA);

	for (uint64_t a = gpa & ~(SIZE_2M - 1); a < gpa + size; a += SIZE_2M) {
		uint64_t *e = &pdpt[(a >> 30) & 3], *pd;

		if (!(*e & PTE_P)) {
			if (b->next_gpa + LOAD_PAGE_SIZE > b->limit)
				abort();
			*e = b->next_gpa | PTE_P;
			b->next_gpa += LOAD_PAGE_SIZE;
		}
		pd = (uint64_t *)(b->mem + (*e & PTE_ADDR_MASK));
		pd[(a >> 21) & 511] = a | PTE_LEAF_2M;
	}
}

/* 2-level paging: one page directory (at PML4_GPA) of 4 MiB pages (CR4.PSE). */
static void pt_map_4m(struct pt_builder *b, uint64_t gpa, uint64_t size)
{
	uint32_t *pd = (uint32_t *)(b->mem + PML4_GPA);

	for (uint64_t a = gpa & ~(SIZE_4M - 1); a < gpa + size; a += SIZE_4M)
		pd[a >> 22] = (uint32_t)a | PTE_P | PTE_RW | PTE_US | PTE_A | PTE_D | PTE_PS;
}

static void gdt_set(uint8_t *mem, const struct kvm_segment *s)
{
	uint64_t *gdt = (uint64_t *)(mem + GDT_GPA);
	uint32_t limit = s->g ? s->limit >> 12 : s->limit;
	uint64_t d;

	d = (limit & 0xffffULL) | (s->base & 0xffffffULL) << 16 | (uint64_t)s->type << 40 |
	    (uint64_t)s->s << 44 | (uint64_t)s->dpl << 45 | (uint64_t)s->present << 47 |
	    (limit >> 16 & 0xfULL) << 48 | (uint64_t)s->avl << 52 | (uint64_t)s->l << 53 |
	    (uint64_t)s->db << 54 | (uint64_t)s->g << 55 | (s->base >> 24 & 0xffULL) << 56;
	gdt[s->selector >> 3] = d;
	if (!s->s) /* 64-bit system descriptors take two slots */
		gdt[(s->selector >> 3) + 1] = s->base >> 32;
}

static const struct kvm_segment user_code = {
	.base = 0,
	.limit = 0xffffffff,
	.selector = SEL_USER_CODE,
	.type = 11, /* execute/read, accessed */
	.present = 1,
	.dpl = 3,
	.s = 1,
	.l = 1,
	.g = 1,
};

static const struct kvm_segment user_data = {
	.base = 0,
	.limit = 0xffffffff,
	.selector = SEL_USER_DATA,
	.type = 3, /* read/write, accessed */
	.present = 1,
	.dpl = 3,
	.db = 1,
	.s = 1,
	.g = 1,
};

/* cr0wp: the same flat segment at CPL0, under its own selector */
static struct kvm_segment at_cpl0(struct kvm_segment seg, __u16 selector)
{
	seg.dpl = 0;
	seg.selector = selector;
	return seg;
}

/*
 * IOPL=3 in RFLAGS would be enough on VMX and SVM, but PVM runs the guest
 * with the hardware IOPL at 0 and drops the guest's on the first exit: the
 * "out" then takes #GP and KVM's emulator allows it only through this TSS's
 * I/O bitmap. VMX also insists on a usable busy TSS.
 */
static const struct kvm_segment tss = {
	.base = TSS_GPA,
	.limit = TSS_LIMIT,
	.selector = SEL_TSS,
	.type = 11, /* 64-bit TSS, busy */
	.present = 1,
};

void guest_build_memory(struct vm *vm)
{
	struct pt_builder b = {
		.mem = vm->sys_mem,
		.next_gpa = first_table_gpa(vm->nr_vcpus), /* the PML4 is fixed */
		.limit = vm->sys_size,
	};
	const char *code = guest_code32_start;
	size_t code_len = guest_code32_end - guest_code32_start;
	uint64_t tables_gpa = first_table_gpa(vm->nr_vcpus);
	struct kvm_segment kcode, kdata;

	if (vm->mode == GUEST_LONG) {
		code = guest_code_start;
		code_len = guest_code_end - guest_code_start;
	} else if (vm->mode == GUEST_CR0WP) {
		code = guest_code_cr0wp_start;
		code_len = guest_code_cr0wp_end - guest_code_cr0wp_start;
	}
	*(uint16_t *)(b.mem + TSS_GPA + 0x66) = TSS_IOMAP_BASE;
	memset(b.mem + TSS_GPA + TSS_IOMAP_BASE, 0xff, TSS_LIMIT + 1 - TSS_IOMAP_BASE);
	b.mem[TSS_GPA + TSS_IOMAP_BASE + LOAD_PORT / 8] &= ~(1u << (LOAD_PORT % 8));
	gdt_set(b.mem, &user_code);
	gdt_set(b.mem, &user_data);
	gdt_set(b.mem, &tss);
	kcode = at_cpl0(user_code, SEL_KERNEL_CODE);
	kdata = at_cpl0(user_data, SEL_KERNEL_DATA);
	gdt_set(b.mem, &kcode);
	gdt_set(b.mem, &kdata);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		memcpy(b.mem + code_gpa(i), code, code_len);
	/* Only slot 0 and the test memory are mapped: a stray access triple-faults. */
	switch (vm->mode) {
	case GUEST_LONG:
	case GUEST_CR0WP:
		pt_map_2m(&b, 0, tables_gpa);
		pt_map_2m(&b, vm->test_gpa, vm->test_size);
		if (vm->mmio_reads)
			pt_map_2m(&b, MMIO_GPA, LOAD_PAGE_SIZE);
		break;
	case GUEST_PAE:
		pt_map_pae(&b, 0, tables_gpa);
		pt_map_pae(&b, vm->test_gpa, vm->test_size);
		break;
	case GUEST_32BIT:
		pt_map_4m(&b, 0, tables_gpa);
		pt_map_4m(&b, vm->test_gpa, vm->test_size);
		break;
	case GUEST_NONPAGING: /* guest-physical is linear: nothing to map */
		break;
	}
	vlog("guest: %zu bytes of code per vCPU from GPA 0x%llx, %llu more page-table pages",
	     code_len, (unsigned long long)CODE_GPA,
	     (unsigned long long)((b.next_gpa - tables_gpa) / LOAD_PAGE_SIZE));
}

/* What KVM supports, handed back unchanged: long mode and MAXPHYADDR come from it. */
struct kvm_cpuid2 *guest_supported_cpuid(int kvm_fd)
{
	for (unsigned int n = 64; n <= 4096; n *= 2) {
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));

		if (!c)
			return NULL;
		c->nent = n;
		if (!ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c))
			return c;
		free(c);
		if (errno != E2BIG) {
			vlog("KVM_GET_SUPPORTED_CPUID: %s (vCPUs keep the default CPUID)",
			     strerror(errno));
			return NULL;
		}
	}
	return NULL;
}

/*
 * Whether the vCPU kept the mode KVM_SET_SREGS gave it. A host that cannot
 * run a mode may drop a bit of it without a word (PVM clears CR0.PG outside
 * long mode), and the guest's first store then triple-faults: say what the
 * host lacks instead.
 */
static int check_mode_kept(const struct vcpu *v, const struct kvm_sregs *want)
{
	struct kvm_sregs got;
	const char *lost = NULL;

	if (ioctl(v->fd, KVM_GET_SREGS, &got) < 0) {
		elog("vCPU %d: KVM_GET_SREGS: %s", v->id, strerror(errno));
		return -1;
	}
	if ((want->cr0 & CR0_PE) && !(got.cr0 & CR0_PE))
		lost = "CR0.PE (protected mode)";
	else if ((want->cr0 & CR0_PG) && !(got.cr0 & CR0_PG))
		lost = "CR0.PG (paging)";
	else if ((want->cr4 & CR4_PAE) && !(got.cr4 & CR4_PAE))
		lost = "CR4.PAE";
	else if ((want->cr4 & CR4_PSE) && !(got.cr4 & CR4_PSE))
		lost = "CR4.PSE (4 MiB pages)";
	else if ((want->efer & EFER_LMA) && !(got.efer & EFER_LMA))
		lost = "EFER.LMA (long mode)";
	if (!lost)
		return 0;
	elog("--guest-mode %s: this host's KVM cannot run such a guest: it drops %s from the "
	     "vCPU's registers%s",
	     guest_mode_name(v->vm->mode), lost,
	     access("/sys/module/kvm_pvm", F_OK)
		     ? ""
		     : " (kvm_pvm: PVM runs paged guests in long mode only)");
	return -1;
}

int guest_init_vcpu(struct vcpu *v, const struct kvm_cpuid2 *cpuid)
{
	enum guest_mode mode = v->vm->mode;
	bool cpl0 = mode == GUEST_CR0WP;
	struct kvm_segment code = cpl0 ? at_cpl0(user_code, SEL_KERNEL_CODE) : user_code;
	struct kvm_segment data = cpl0 ? at_cpl0(user_data, SEL_KERNEL_DATA) : user_data;
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (cpuid && ioctl(v->fd, KVM_SET_CPUID2, cpuid) < 0) {
		elog("vCPU %d: KVM_SET_CPUID2: %s", v->id, strerror(errno));
		return -1;
	}
	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0) {
		elog("vCPU %d: KVM_GET_SREGS: %s", v->id, strerror(errno));
		return -1;
	}
	if (!guest_mode_is_long(mode)) { /* a 32-bit code segment */
		code.l = 0;
		code.db = 1;
	}
	sregs.cs = code;
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = data;
	sregs.tr = tss;
	memset(&sregs.ldt, 0, sizeof(sregs.ldt));
	sregs.ldt.unusable = 1;
	sregs.gdt.base = GDT_GPA;
	sregs.gdt.limit = GDT_ENTRIES * 8 - 1;
	/* No IDT: any exception escalates to a triple fault, which the host reports. */
	sregs.idt.base = 0;
	sregs.idt.limit = 0;
	sregs.cr0 = CR0_PE | CR0_NE | (mode == GUEST_NONPAGING ? 0 : CR0_WP | CR0_PG);
	sregs.cr3 = PML4_GPA;
	sregs.cr4 = mode == GUEST_32BIT ? CR4_PSE : mode == GUEST_NONPAGING ? 0 : CR4_PAE;
	sregs.efer = guest_mode_is_long(mode) ? EFER_LME | EFER_LMA : 0;
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0) {
		elog("vCPU %d: KVM_SET_SREGS (%s mode, CPL%u): %s", v->id, guest_mode_name(mode),
		     code.dpl, strerror(errno));
		return -1;
	}
	if (check_mode_kept(v, &sregs))
		return -1;

	memset(&regs, 0, sizeof(regs));
	regs.rip = code_gpa(v->id);
	regs.rflags = RFLAGS_FIXED | RFLAGS_IOPL3;
	regs.rdi = v->gpa;
	regs.rsi = v->pages;
	regs.rdx = LOAD_PORT;
	regs.r8 = v->vm->mmio_reads;
	regs.r9 = MMIO_GPA;
	regs.r11 = v->vm->access;
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0) {
		elog("vCPU %d: KVM_SET_REGS: %s", v->id, strerror(errno));
		return -1;
	}
	return 0;
}

void guest_dump_vcpu(FILE *f, const struct vcpu *v)
{
	struct kvm_sregs s;
	struct kvm_regs r;

	if (ioctl(v->fd, KVM_GET_REGS, &r) < 0 || ioctl(v->fd, KVM_GET_SREGS, &s) < 0) {
		fprintf(f, "  (registers unavailable: %s)\n", strerror(errno));
		return;
	}
	fprintf(f,
		"  rip=0x%llx rsp=0x%llx rflags=0x%llx\n"
		"  rax=0x%llx rbx=0x%llx rcx=0x%llx rdx=0x%llx rsi=0x%llx rdi=0x%llx\n"
		"  cr0=0x%llx cr2=0x%llx cr3=0x%llx cr4=0x%llx efer=0x%llx\n"
		"  cs=0x%x (dpl %u, l %u) ss=0x%x (dpl %u)\n",
		r.rip, r.rsp, r.rflags, r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, s.cr0, s.cr2,
		s.cr3, s.cr4, s.efer, s.cs.selector, s.cs.dpl, s.cs.l, s.ss.selector, s.ss.dpl);
}
