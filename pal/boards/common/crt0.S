/* Startup code shared by every board: vector table, stack and global pointer,
   .data/.bss/TLS set-up, C++ constructors, main, exit.

   Board macros (set by the board module through CPPDEFINES):
     BOARD_VECTORS_FIRST  the vector table sits at the image origin and _start
                          128 bytes later (CV32E40P: boot address 0x80), mtvec in
                          vectored mode; otherwise _start is at the origin (QEMU virt
                          jumps to DRAM base) and every trap goes to __trap_entry. */

    .section .text.boot, "ax", @progbits
    .option push
    .option norvc           /* vector entries must be exactly 4 bytes */
    /* No linker relaxation either: it shortened calls here to 2-byte c.jal (the object
       is RVC, whatever this file's norvc says) and moved the .balign'ed __trap_entry
       to 2 mod 4, where QEMU's mtvec (direct mode) would not take it: traps then
       looped at address 0 (tests/test_devloop.py). */
    .option norelax

#ifdef BOARD_VECTORS_FIRST
    .globl __vectors
__vectors:
    .rept 32
    j __trap_entry
    .endr
#endif

    .globl _start
    .type _start, @function
_start:
    .option push
    .option norelax         /* gp is not yet valid: no gp-relative relaxation */
    la gp, __global_pointer$
    .option pop
    la sp, __stack_top

    /* Vectored mode on boards with a vector table, direct mode elsewhere. */
#ifdef BOARD_VECTORS_FIRST
    la t0, __vectors
    ori t0, t0, 1
#else
    la t0, __trap_entry
#endif
    csrw mtvec, t0
    csrw mscratch, zero     /* no trap being reported (__trap_entry) */

#ifdef __riscv_flen
    /* An FPU (isa=rv32imfc) is off after reset: set mstatus.FS to Initial. */
    li t0, 0x2000
    csrs mstatus, t0
#endif

    /* CV32E40P inhibits mcycle/minstret after reset; count from here on, from zero
       (QEMU's counter starts at machine start-up, not at reset). */
    csrw mcycle, zero
    csrw mcycleh, zero
    csrw mcountinhibit, zero

    /* .data: copy from its load address when that differs (image in flash). */
    la a0, __data_start
    la a1, __data_load
    la a2, __data_end
    beq a0, a1, 2f
1:  bgeu a0, a2, 2f
    lw t0, 0(a1)
    sw t0, 0(a0)
    addi a0, a0, 4
    addi a1, a1, 4
    j 1b
2:
    /* .bss (the linker script aligns both ends to 4). Buffers that the program
       initialises itself live in .noinit and are not cleared. */
    la a0, __bss_start
    la a1, __bss_end
    call __crt0_zero_words
    /* Thread pointer: picolibc's errno is thread-local (local-exec model), so tp
       must point at a TLS block holding a copy of .tdata and a zeroed .tbss. */
    la tp, __tls_base
    la a0, __tls_base
    la a1, __tdata_load
    la a2, __tls_tdata_end
5:  bgeu a0, a2, 6f
    lw t0, 0(a1)
    sw t0, 0(a0)
    addi a0, a0, 4
    addi a1, a1, 4
    j 5b
6:  la a1, __tls_end
    call __crt0_zero_words
    /* C++ static constructors: this is where registrations (kernels, backends) run. */
    la s0, __init_array_start
    la s1, __init_array_end
9:  bgeu s0, s1, 10f
    lw t0, 0(s0)
    jalr t0
    addi s0, s0, 4
    j 9b
10:
    li a0, 0
    li a1, 0
    call main
    call exit
11: j 11b
    .size _start, . - _start

    /* Zeroes the words from a0 up to a1 (both 4-aligned, a0 <= a1), four at a time:
       a word at a time, the loop's taken branch cost twice the stores (about 1,000 of
       add.pte's 20,000 cycles on the CV32E40P). Touches a0, a2 only; C-callable
       (tests/fixtures/board_routines). */
    .globl __crt0_zero_words
    .type __crt0_zero_words, @function
__crt0_zero_words:
    sub a2, a1, a0
    andi a2, a2, -16
    add a2, a0, a2          /* the end of the whole groups of four */
    beq a0, a2, 2f
1:  sw zero, 0(a0)
    sw zero, 4(a0)
    sw zero, 8(a0)
    sw zero, 12(a0)
    addi a0, a0, 16
    bne a0, a2, 1b
2:  beq a0, a1, 4f
3:  sw zero, 0(a0)
    addi a0, a0, 4
    bne a0, a1, 3b
4:  ret
    .size __crt0_zero_words, . - __crt0_zero_words

    /* Any trap or interrupt: report it and end the program (board_trap). The report
       relies on nothing of the program's state: gp and sp are set anew, and the
       program's sp and ra are passed on for the report. mscratch is 0 until a trap:
       a trap while reporting one (the handler's code overwritten, the console faulting)
       must not loop through here for ever, silently: it ends the program at once. */
    .balign 4
    .globl __trap_entry
__trap_entry:
    csrrwi t0, mscratch, 1
    bnez t0, __trap_in_trap
    mv t0, sp
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    la sp, __stack_top
    csrr a0, mcause
    csrr a1, mepc
    csrr a2, mtval
    mv a3, ra
    mv a4, t0
    call board_trap
12: j 12b

    /* A trap in the trap handler: a fixed message and exit status 128 + the cause,
       with the board's devices only. */
__trap_in_trap:
    la t0, __trap_in_trap_message
    li t1, BOARD_CONSOLE_ADDR
13: lbu t2, 0(t0)
    beqz t2, 14f
    sb t2, 0(t1)
    addi t0, t0, 1
    j 13b
14: csrr t0, mcause
    andi t0, t0, 0x7f
    addi t0, t0, 128
    li t1, BOARD_EXIT_ADDR
#ifdef BOARD_EXIT_SIFIVE_TEST
    slli t0, t0, 16
    li t2, 0x3333
    or t0, t0, t2
#endif
    sw t0, 0(t1)
15: j 15b
    .size __trap_entry, . - __trap_entry
__trap_in_trap_message:
    .asciz "\ntrap: a trap in the trap handler\n"
    .balign 4
    .option pop
