/* What picolibc (Debian's riscv64-unknown-elf toolchain) needs of the system.

   picolibc's stdio does not call _write: stdout is a stream over board_putc. Its errno
   is thread-local: crt0.S sets up the TLS block. */

#include <stdio.h>
#include <stdlib.h>

#include "board.h"

void _exit(int code) { board_exit(code); }

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
