/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest side of kvmmmu-load for the 32-bit guest modes (PAE, 2-level
 * paging, paging off): the same loop as guest_code.S, in 32-bit protected
 * mode at CPL3, so that its faults reach paging32_page_fault and
 * nonpaging_page_fault under shadow paging. Position independent, no stack.
 *
 * In:  %edi = GPA of the first page of this vCPU's region (below 4 GiB)
 *      %esi = number of 4 KiB pages in the region (at least 1)
 *      %dx  = I/O port the host watches for "pass done"
 *      %al  = value to store (the pass number, low byte)
 */
	.section .rodata, "a"
	.code32
	.globl	guest_code32_start
	.globl	guest_code32_end

guest_code32_start:
1:	movl	%edi, %ebx
	movl	%esi, %ecx
	incb	%al
	/* One plain store per page: a read-modify-write would fault twice. */
2:	movb	%al, (%ebx)
	addl	$4096, %ebx
	decl	%ecx
	jnz	2b
	outb	%al, (%dx)
	jmp	1b
guest_code32_end:

	.section .note.GNU-stack, "", @progbits
