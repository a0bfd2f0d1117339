/* Console, exit and trap reporting for every board, on picolibc or newlib.

   Board macros (CPPDEFINES from the board module):
     BOARD_CONSOLE_ADDR  a byte store here prints a character
     BOARD_EXIT_ADDR     where the exit code goes
     BOARD_EXIT_SIFIVE_TEST  the exit device is QEMU's sifive_test (pass/fail
                         encoding) instead of a plain exit-value register */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

__attribute__((noreturn)) void board_trap(uint32_t mcause, uint32_t mepc,
                                          uint32_t mtval) {
  board_puts("\ntrap: mcause 0x");
  put_hex(mcause);
  board_puts(" mepc 0x");
  put_hex(mepc);
  board_puts(" mtval 0x");
  put_hex(mtval);
  board_putc('\n');
  board_exit(128 + (int)(mcause & 0x7f));
}

void _exit(int code) { board_exit(code); }

#ifdef __PICOLIBC__
/* picolibc's stdio does not call _write: stdout is a stream over board_putc. */
static int stream_putc(char c, FILE *file) {
  (void)file;
  board_putc(c);
  return (unsigned char)c;
}
static FILE console = FDEV_SETUP_STREAM(stream_putc, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stdout = &console;
FILE *const stderr = &console;
FILE *const stdin = &console;

/* abort() raises SIGABRT through kill(): end the program with the signal's status. */
int getpid(void) { return 1; }
int kill(int pid, int sig) {
  (void)pid;
  board_exit(128 + sig);
}
#else
/* newlib (CORE-V GCC): the usual system-call stubs. */
#include <errno.h>
#include <sys/stat.h>
extern char __heap_start[], __heap_end[];
static char *heap_top = __heap_start;

int _write(int fd, const char *buf, int len) {
  (void)fd;
  for (int i = 0; i < len; i++) board_putc(buf[i]);
  return len;
}
void *_sbrk(ptrdiff_t incr) {
  char *prev = heap_top;
  if (heap_top + incr > __heap_end) {
    errno = ENOMEM;
    return (void *)-1;
  }
  heap_top += incr;
  return prev;
}
int _read(int fd, char *buf, int len) { (void)fd; (void)buf; (void)len; return 0; }
int _close(int fd) { (void)fd; return -1; }
int _fstat(int fd, struct stat *st) { (void)fd; st->st_mode = S_IFCHR; return 0; }
int _isatty(int fd) { (void)fd; return 1; }
int _lseek(int fd, int off, int whence) { (void)fd; (void)off; (void)whence; return 0; }
int _kill(int pid, int sig) { (void)pid; (void)sig; errno = EINVAL; return -1; }
int _getpid(void) { return 1; }
#endif
