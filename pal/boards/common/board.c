/* Console, exit, cycle counter and trap reporting for every board. What the C library
   needs of the system (stdio, exit, heap, ...) is in libc_<picolibc|newlib>.c.

   Board macros (CPPDEFINES from the board module):
     BOARD_CONSOLE_ADDR  a byte store here prints a character
     BOARD_EXIT_ADDR     where the exit code goes
     BOARD_EXIT_SIFIVE_TEST  the exit device is QEMU's sifive_test (pass/fail
                         encoding) instead of a plain exit-value register */

#include <stdint.h>

#include "board.h"

void board_putc(char c) {
  *(volatile uint8_t *)BOARD_CONSOLE_ADDR = (uint8_t)c;
}

void board_puts(const char *s) {
  while (*s) board_putc(*s++);
}

__attribute__((noreturn)) void board_exit(int code) {
#ifdef BOARD_EXIT_SIFIVE_TEST
  *(volatile uint32_t *)BOARD_EXIT_ADDR =
      code == 0 ? 0x5555u : (((uint32_t)code & 0xffffu) << 16) | 0x3333u;
#else
  *(volatile uint32_t *)BOARD_EXIT_ADDR = (uint32_t)code;
#endif
  for (;;) {
  }
}

uint64_t board_cycles(void) {
  uint32_t hi, lo, hi2;
  do {
    __asm__ volatile("csrr %0, mcycleh" : "=r"(hi));
    __asm__ volatile("csrr %0, mcycle" : "=r"(lo));
    __asm__ volatile("csrr %0, mcycleh" : "=r"(hi2));
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
}

static void put_hex(uint32_t v) {
  for (int shift = 28; shift >= 0; shift -= 4)
    board_putc("0123456789abcdef"[(v >> shift) & 0xf]);
}

static const char *const exception_names[16] = {
    "instruction address misaligned", "instruction access fault", "illegal instruction",
    "breakpoint", "load address misaligned", "load access fault",
    "store address misaligned", "store access fault", "ecall from U-mode",
    "ecall from S-mode", 0, "ecall from M-mode", "instruction page fault",
    "load page fault", 0, "store page fault"};

static void put_cause(uint32_t mcause, uint32_t mepc) {
  board_puts(" (");
  if (mcause & 0x80000000u) {
    board_puts("interrupt");
  } else if (mcause == 0 && mepc == 0) {
    /* mcause and mepc as after reset: no exception took place. On the CV32E40P the
       vector table is at 0 and a jump there (a null function pointer) lands here. */
    board_puts("no exception: a jump into the vector table, e.g. a null function "
               "pointer; ra says from where");
  } else if (mcause < 16 && exception_names[mcause]) {
    board_puts(exception_names[mcause]);
  } else {
    board_puts("unknown cause");
  }
  board_putc(')');
}

/* Called by crt0.S's __trap_entry for any trap: one line on the console, then exit
   with status 128 + the cause (as a shell reports a signal). */
__attribute__((noreturn)) void board_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval,
                                          uint32_t ra, uint32_t sp) {
  board_puts("\ntrap: mcause 0x");
  put_hex(mcause);
  put_cause(mcause, mepc);
  board_puts(" mepc 0x");
  put_hex(mepc);
  board_puts(" mtval 0x");
  put_hex(mtval);
  board_puts(" ra 0x");
  put_hex(ra);
  board_puts(" sp 0x");
  put_hex(sp);
  board_putc('\n');
  board_exit(128 + (int)(mcause & 0x7f));
}
