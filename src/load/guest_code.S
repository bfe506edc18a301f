/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest side of kvmmmu-load: 64-bit code that runs at CPL3 so that its
 * stores take real shadow-MMU faults (CPL0 code is emulated on PVM hosts).
 * It is copied into guest memory, so it must be position independent and
 * must not touch a stack.
 *
 * In:  %rdi = GPA of the first page of this vCPU's region
 *      %rsi = number of 4 KiB pages in the region (at least 1)
 *      %dx  = I/O port the host watches for "pass done"
 *      %al  = value to store (the pass number, low byte)
 *      %r8  = MMIO reads after each pass (--mmio), %r9 = their address
 *      %r11 = how each page is touched (--access): 0 a store, 1 a load, 2 a
 *             call-free jump into it, whose first bytes the host wrote as
 *             "jmp *%r12" (back here)
 */
	.section .rodata, "a"
	.code64
	.globl	guest_code_start
	.globl	guest_code_end

guest_code_start:
1:	movq	%rdi, %rbx
	movq	%rsi, %rcx
	incb	%al
	/* One plain store per page: a read-modify-write would fault twice. */
2:	cmpq	$1, %r11
	je	5f
	cmpq	$2, %r11
	je	6f
	movb	%al, (%rbx)
	jmp	7f
5:	movb	(%rbx), %r10b
	jmp	7f
6:	leaq	7f(%rip), %r12
	jmp	*%rbx
7:	addq	$4096, %rbx
	decq	%rcx
	jnz	2b
	movq	%r8, %rcx
	testq	%rcx, %rcx
	jz	4f
	/* no memslot there: each read is emulated by KVM and exits to the host */
3:	movb	(%r9), %r10b
	decq	%rcx
	jnz	3b
	/* Allowed at CPL3 because the host gives us RFLAGS.IOPL = 3. */
4:	outb	%al, (%dx)
	jmp	1b
guest_code_end:

/*
 * --guest-mode cr0wp, at CPL0 (same inputs): CR0.WP off before each store and
 * on again after it. Each write to CR0 exits to KVM, and changes the MMU
 * role: where the kernel unloads the MMU roots on a role change, each does.
 */
	.globl	guest_code_cr0wp_start
	.globl	guest_code_cr0wp_end

guest_code_cr0wp_start:
1:	movq	%rdi, %rbx
	movq	%rsi, %rcx
	incb	%al
	movq	%cr0, %r8
2:	btrq	$16, %r8
	movq	%r8, %cr0
	movb	%al, (%rbx)
	btsq	$16, %r8
	movq	%r8, %cr0
	addq	$4096, %rbx
	decq	%rcx
	jnz	2b
	outb	%al, (%dx)
	jmp	1b
guest_code_cr0wp_end:

	.section .note.GNU-stack, "", @progbits
