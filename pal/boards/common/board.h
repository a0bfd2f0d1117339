/* The board interface every board provides (pal/boards/common/board.c). */
#ifndef COREV_BOARD_H
#define COREV_BOARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void board_putc(char c);
void board_puts(const char *s);
void board_put_u64(uint64_t value);  /* in decimal */
__attribute__((noreturn)) void board_exit(int code);
uint64_t board_cycles(void);

#ifdef __cplusplus
}
#endif

#endif
