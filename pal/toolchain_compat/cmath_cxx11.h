// The C++11 <cmath> functions a libstdc++ built on newlib for RV32 leaves out, for a
// toolchain that lacks them (the build probes each compiler once, and force-includes
// this header only for one without them: toolchain.py).
//
// Why they are missing: newlib declares the long double math functions (lgammal, ...)
// only where long double is double, which it is not on RV32, and libstdc++'s configure
// test for C99 math in TR1 needs all of them: _GLIBCXX_USE_C99_MATH_TR1 stays undefined
// and <cmath> declares none of std::trunc, std::lgamma, std::nextafter, ... (ExecuTorch's
// c10/util/BFloat16-math.h and kernels use them). Here: the double functions of
// <math.h> brought into std, float overloads on the ...f functions newlib has, and
// integer arguments as double, as the standard says. Long double arguments are computed
// in double (newlib has no long double functions on RV32 to call).
#pragma once

#include <cmath>
#include <type_traits>

namespace std {

#define COREV_COMPAT_UNARY(name, result)                                            \
  using ::name;                                                                     \
  inline result name(float x) { return ::name##f(x); }                              \
  inline result name(long double x) { return ::name(static_cast<double>(x)); }      \
  template <typename T, typename = typename enable_if<is_integral<T>::value>::type> \
  inline result name(T x) { return ::name(static_cast<double>(x)); }

#define COREV_COMPAT_UNARY_FLOAT(name) COREV_COMPAT_UNARY(name, decltype(::name(0.0)))

COREV_COMPAT_UNARY(acosh, double)
COREV_COMPAT_UNARY(asinh, double)
COREV_COMPAT_UNARY(atanh, double)
COREV_COMPAT_UNARY(cbrt, double)
COREV_COMPAT_UNARY(erf, double)
COREV_COMPAT_UNARY(erfc, double)
COREV_COMPAT_UNARY(exp2, double)
COREV_COMPAT_UNARY(expm1, double)
COREV_COMPAT_UNARY(lgamma, double)
COREV_COMPAT_UNARY(log1p, double)
COREV_COMPAT_UNARY(log2, double)
COREV_COMPAT_UNARY(logb, double)
COREV_COMPAT_UNARY(nearbyint, double)
COREV_COMPAT_UNARY(rint, double)
COREV_COMPAT_UNARY(round, double)
COREV_COMPAT_UNARY(tgamma, double)
COREV_COMPAT_UNARY(trunc, double)
COREV_COMPAT_UNARY(ilogb, int)
COREV_COMPAT_UNARY(lrint, long)
COREV_COMPAT_UNARY(lround, long)
COREV_COMPAT_UNARY(llrint, long long)
COREV_COMPAT_UNARY(llround, long long)

#define COREV_COMPAT_BINARY(name)                                                   \
  using ::name;                                                                     \
  inline float name(float x, float y) { return ::name##f(x, y); }                   \
  inline double name(long double x, long double y) {                                \
    return ::name(static_cast<double>(x), static_cast<double>(y));                  \
  }                                                                                 \
  template <typename T, typename U,                                                 \
            typename = typename enable_if<is_arithmetic<T>::value &&                \
                                          is_arithmetic<U>::value &&                \
                                          !(is_same<T, float>::value &&             \
                                            is_same<U, float>::value)>::type>       \
  inline double name(T x, U y) {                                                    \
    return ::name(static_cast<double>(x), static_cast<double>(y));                  \
  }

COREV_COMPAT_BINARY(copysign)
COREV_COMPAT_BINARY(fdim)
COREV_COMPAT_BINARY(fmax)
COREV_COMPAT_BINARY(fmin)
COREV_COMPAT_BINARY(hypot)
COREV_COMPAT_BINARY(nextafter)
COREV_COMPAT_BINARY(remainder)

using ::fma;
inline float fma(float x, float y, float z) { return ::fmaf(x, y, z); }
using ::remquo;
inline float remquo(float x, float y, int* quo) { return ::remquof(x, y, quo); }
using ::nan;
using ::nanf;
using ::scalbln;
inline float scalbln(float x, long n) { return ::scalblnf(x, n); }
using ::scalbn;
inline float scalbn(float x, int n) { return ::scalbnf(x, n); }

#undef COREV_COMPAT_UNARY
#undef COREV_COMPAT_UNARY_FLOAT
#undef COREV_COMPAT_BINARY

}  // namespace std
