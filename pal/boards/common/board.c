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

/* Four characters a turn: one character a turn, the loop's taken branch cost more than
   the character (about 10 cycles each on the CV32E40P). */
void board_puts(const char *s) {
  for (;; s += 4) {
    if (!s[0]) return;
    board_putc(s[0]);
    if (!s[1]) return;
    board_putc(s[1]);
    if (!s[2]) return;
    board_putc(s[2]);
    if (!s[3]) return;
    board_putc(s[3]);
  }
}

/* Decimal. Below 2^32 (every count and size a run prints) a digit is a multiply-high by
   2^35/10 and a shift: libgcc's division and a 64-bit loop over the powers of ten cost
   about 500 cycles a number on the CV32E40P, this about 15 a digit. Above, the powers of
   ten are subtracted (RV32 has no 64-bit division, and __udivdi3 would cost more). */
void board_put_u64(uint64_t value) {
  if (value >> 32) {
    static const uint64_t powers[] = {
        10000000000000000000ull, 1000000000000000000ull, 100000000000000000ull,
        10000000000000000ull, 1000000000000000ull, 100000000000000ull, 10000000000000ull,
        1000000000000ull, 100000000000ull, 10000000000ull, 1000000000ull, 100000000ull,
        10000000ull, 1000000ull, 100000ull, 10000ull, 1000ull, 100ull, 10ull, 1ull};
    int started = 0;
    for (unsigned i = 0; i < sizeof(powers) / sizeof(powers[0]); i++) {
      char digit = '0';
      while (value >= powers[i]) {
        value -= powers[i];
        ++digit;
      }
      if (digit != '0' || started) {
        board_putc(digit);
        started = 1;
      }
    }
    return;
  }
  uint32_t v = (uint32_t)value;
  char digits[10];
  int n = 0;
  do {
    const uint32_t q = (uint32_t)(((uint64_t)v * 0xCCCCCCCDu) >> 35);
    digits[n++] = (char)('0' + (v - q * 10));
    v = q;
  } while (v);
  while (n) board_putc(digits[--n]);
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

/* Called by crt0.S's __trap_entry for any trap: one line on the console, then exit
   with status 128 + the cause (as a shell reports a signal). Numbers only, to keep the
   image small: `scons run` names the cause and the function (etcorev/traps.py). On the
   CV32E40P a jump to 0 (a null function pointer) lands in the vector table with mcause
   and mepc 0; ra then says from where. */
__attribute__((noreturn)) void board_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval,
                                          uint32_t ra, uint32_t sp) {
  board_puts("\ntrap: mcause 0x");
  put_hex(mcause);
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
