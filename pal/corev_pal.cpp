// The ExecuTorch platform abstraction layer (runtime/platform/platform.h) for the
// CORE-V boards: cycle counter time, console logging, abort through the board's exit.
// It replaces the weak definitions of ExecuTorch's minimal PAL.
#include <cstdlib>

#include <executorch/runtime/platform/platform.h>

#include "board.h"

#ifndef COREV_CLOCK_NS_NUMERATOR
// 400 MHz: 5 ns every 2 cycles.
#define COREV_CLOCK_NS_NUMERATOR 5
#define COREV_CLOCK_NS_DENOMINATOR 2
#endif

extern "C" {

void et_pal_init(void) {
  // CV32E40P inhibits mcycle/minstret after reset (startup clears it too).
  __asm__ volatile("csrw mcountinhibit, zero");
}

ET_NORETURN void et_pal_abort(void) {
  board_puts("ExecuTorch abort\n");
  board_exit(134);
}

et_timestamp_t et_pal_current_ticks(void) {
  return board_cycles();
}

et_tick_ratio_t et_pal_ticks_to_ns_multiplier(void) {
  return {COREV_CLOCK_NS_NUMERATOR, COREV_CLOCK_NS_DENOMINATOR};
}

void et_pal_emit_log_message(
    et_timestamp_t timestamp,
    et_pal_log_level_t level,
    const char* filename,
    const char* function,
    size_t line,
    const char* message,
    size_t length) {
  // "I 123456 method.cpp:42] message", through the board's console rather than printf:
  // ExecuTorch's PAL table keeps this function in every image, logging=Off too, and
  // printf would bring newlib's stdio along (about 2 KiB of add.pte's text).
  (void)function;
  (void)length;
  board_putc(static_cast<char>(level));
  board_putc(' ');
  board_put_u64(timestamp);
  board_putc(' ');
  board_puts(filename);
  board_putc(':');
  board_put_u64(line);
  board_puts("] ");
  board_puts(message);
  board_putc('\n');
}

void* et_pal_allocate(size_t size) {
  return std::malloc(size);
}

void et_pal_free(void* ptr) {
  std::free(ptr);
}

}  // extern "C"
