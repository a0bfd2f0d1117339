/* What newlib (CORE-V GCC, riscv32-corev-elf) needs of the system: the usual system-call
   stubs over the board's console and exit, a heap between the stack and the end of RAM,
   and what crtbegin.o would give a program linked with its startup files (we link with
   -nostartfiles and our own crt0.S). */

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <sys/stat.h>

#include "board.h"

void _exit(int code) { board_exit(code); }

/* Static destructors registered with __cxa_atexit name the module by __dso_handle. */
void *__dso_handle = &__dso_handle;

int _write(int fd, const char *buf, int len) {
  (void)fd;
  for (int i = 0; i < len; i++) board_putc(buf[i]);
  return len;
}

extern char __heap_start[], __heap_end[];
static char *heap_top = __heap_start;

void *_sbrk(ptrdiff_t increment) {
  char *previous = heap_top;
  if (increment > __heap_end - heap_top) {
    errno = ENOMEM;
    return (void *)-1;
  }
  heap_top += increment;
  return previous;
}

int _read(int fd, char *buf, int len) { (void)fd; (void)buf; (void)len; return 0; }
int _close(int fd) { (void)fd; return -1; }
int _fstat(int fd, struct stat *st) { (void)fd; st->st_mode = S_IFCHR; return 0; }
int _isatty(int fd) { (void)fd; return 1; }
int _lseek(int fd, int offset, int whence) { (void)fd; (void)offset; (void)whence; return 0; }
int _getpid(void) { return 1; }

/* abort() raises SIGABRT: end the program with the signal's status. */
int _kill(int pid, int sig) {
  (void)pid;
  board_exit(128 + sig);
}

/* libstdc++'s random_device and newlib's arc4random reach for it in builds without
   section GC (Debug); the boards have no entropy source. */
int getentropy(void *buffer, size_t length) {
  (void)buffer;
  (void)length;
  errno = ENOSYS;
  return -1;
}
