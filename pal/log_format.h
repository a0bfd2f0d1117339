/*
 * The formatter of ExecuTorch's log messages (runtime/platform/log.cpp), in place of the
 * C library's vsnprintf. newlib-nano's (CORE-V GCC's C library) takes one length
 * modifier letter of "hlL" and no z, j or t: ExecuTorch's "%" PRId8 ("%hhd", in every
 * "Unhandled dtype" message), "%" PRId64 ("%lld") and "%zu" printed garbage and
 * misaligned the arguments after them, so a logging build trapped in memchr on the
 * next "%s" while reporting an error. The build force-includes this header into
 * log.cpp alone (after <cstdio>, which would #undef the name otherwise); the
 * firmware's own code keeps the C library's printf.
 */
#ifndef COREV_LOG_FORMAT_H
#define COREV_LOG_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
#include <cstdio>
extern "C" {
#endif

/* C99 vsnprintf: flags - + space # 0, width and precision (numbers or *), lengths hh h l
   ll j z t L, conversions d i u o x X c s p f F e E g G %. Writes at most size - 1
   characters and a terminating zero; returns the length the whole text has. */
int corev_log_vsnprintf(char* buffer, size_t size, const char* format, va_list args);

#ifdef __cplusplus
}
#endif

#define vsnprintf corev_log_vsnprintf

#endif
