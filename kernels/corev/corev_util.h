/*
 * Shared helpers of the CORE-V kernels (header-only: every op_*.cpp stands alone).
 *
 * COREV_SOFT_FLOAT: 1 on rv32imc (no FPU: float arithmetic is done on the bits),
 * 0 with an FPU (__riscv_flen) or on a host; a host test may force either.
 * COREV_KERNELS_NO_FALLBACK: compiles the calls of the portable kernels out (a kernel
 * then fails with NotSupported where it would have fallen back), for builds that do
 * not compile the portable sources beside ours.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/kernel/kernel_includes.h>

#ifndef COREV_SOFT_FLOAT
#if defined(__riscv) && !defined(__riscv_flen)
#define COREV_SOFT_FLOAT 1
#else
#define COREV_SOFT_FLOAT 0
#endif
#endif

// Hot loops: inlined and unrolled even where the build optimises for size.
#if defined(__GNUC__) && !defined(__clang__)
#define COREV_HOT __attribute__((optimize("O2")))
#else
#define COREV_HOT
#endif
#define COREV_INLINE inline __attribute__((always_inline))

#ifdef COREV_KERNELS_NO_FALLBACK
#define COREV_FALLBACK(ctx, retval, call)                                      \
  do {                                                                         \
    ET_KERNEL_CHECK_MSG(ctx, false, NotSupported, retval,                      \
                        "corev: case needs the portable kernel");              \
  } while (0)
#else
#define COREV_FALLBACK(ctx, retval, call) return call
#endif

namespace corev {
namespace native {
namespace util {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;

COREV_INLINE uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

COREV_INLINE float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/// Default (contiguous) dim order.
inline bool contiguous(const Tensor& t) {
  return executorch::runtime::is_contiguous_dim_order(t.dim_order().data(),
                                                      t.dim());
}

inline bool is_float(const Tensor& t) {
  return t.scalar_type() == ScalarType::Float;
}

/// A Scalar that equals 1 (alpha, beta), compared on its bits: no soft-float call.
inline bool scalar_is_one(const executorch::aten::Scalar& s) {
  if (s.isFloatingPoint()) {
    const double d = s.to<double>();
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u == 0x3ff0000000000000ull;
  }
  if (s.isIntegral(/*includeBool=*/false)) {
    return s.to<int64_t>() == 1;
  }
  return s.isBoolean() && s.to<bool>();
}

/// a, b and c have the same sizes and dim order: the same elements at the same
/// offsets. Inline comparisons only (no resize or dim-order helpers: add.out must
/// stay small).
inline bool same_layout(const Tensor& a, const Tensor& b, const Tensor& c) {
  // Through the TensorImpls: the Tensor accessors stay as LTO had them.
  const auto* ia = a.unsafeGetTensorImpl();
  const auto* ib = b.unsafeGetTensorImpl();
  const auto* ic = c.unsafeGetTensorImpl();
  const ssize_t n = ia->dim();
  if (n != ib->dim() || n != ic->dim()) {
    return false;
  }
  const auto* sa = ia->sizes().data();
  const auto* sb = ib->sizes().data();
  const auto* sc = ic->sizes().data();
  const auto* da = ia->dim_order().data();
  const auto* db = ib->dim_order().data();
  const auto* dc = ic->dim_order().data();
  for (ssize_t i = 0; i < n; ++i) {
    if (sa[i] != sb[i] || sa[i] != sc[i] || da[i] != db[i] || da[i] != dc[i]) {
      return false;
    }
  }
  return true;
}

inline bool same_sizes(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) {
    return false;
  }
  for (ssize_t i = 0; i < a.dim(); ++i) {
    if (a.size(i) != b.size(i)) {
      return false;
    }
  }
  return true;
}

/// The kernel taps [k0, k1) whose input coordinate o0 + k * d lies in [0, size).
COREV_INLINE void tap_range(int32_t o0, int32_t k, int32_t d, int32_t size,
                            int32_t* k0, int32_t* k1) {
  if (o0 >= 0 && o0 + (k - 1) * d < size) {
    *k0 = 0;  // the whole kernel: the common case, no division
    *k1 = k;
    return;
  }
  int32_t lo = o0 < 0 ? (-o0 + d - 1) / d : 0;
  int32_t hi = size - o0 <= 0 ? 0 : (size - o0 + d - 1) / d;
  *k0 = lo;
  *k1 = hi < k ? (hi > lo ? hi : lo) : k;
}

// ---------------------------------------------------------------------------
// Dot products with one rounding. Soft float: products of the 24-bit significands
// are exact (48 bits) and go into a 64-bit accumulator at a block exponent E (the
// largest product exponent so far); smaller products are shifted to it, so what
// is lost is below 2^-47 of the largest product, per product. The sum is rounded
// to float once (round to nearest even). Infinities and NaNs make it report
// failure: the caller computes that output the generic way. With an FPU: fused
// multiply-adds in order.
// ---------------------------------------------------------------------------

#if COREV_SOFT_FLOAT

struct SoftDot {
  int64_t acc = 0;
  int32_t e = 0;     // value = acc * 2^(e - 300); e = sum of two biased exponents
  int32_t count = 0; // products since the last headroom check

  /// One product a * b (float bits). Returns false on an infinity or NaN.
  COREV_INLINE bool add(uint32_t ua, uint32_t ub) {
    uint32_t ea = (ua >> 23) & 0xff;
    uint32_t eb = (ub >> 23) & 0xff;
    uint32_t ma, mb;
    if (__builtin_expect(ea - 1u >= 254u || eb - 1u >= 254u, 0)) {
      if (ea == 255 || eb == 255) {
        return false;
      }
      ma = ua & 0x7fffff;
      mb = ub & 0x7fffff;
      if (ea == 0) {
        ea = 1;  // subnormal: no hidden bit, exponent of the smallest normal
      } else {
        ma |= 0x800000;
      }
      if (eb == 0) {
        eb = 1;
      } else {
        mb |= 0x800000;
      }
      if (ma == 0 || mb == 0) {
        return true;
      }
    } else {
      ma = (ua & 0x7fffff) | 0x800000;
      mb = (ub & 0x7fffff) | 0x800000;
    }
    accumulate((uint64_t)ma * mb, (int32_t)(ea + eb), (int32_t)(ua ^ ub) < 0);
    return true;
  }

  COREV_INLINE void accumulate(uint64_t p, int32_t pe, bool negative) {
    int32_t d = e - pe;
    if (__builtin_expect(d < 0, 0)) {
      // A larger product: move the accumulator to its exponent.
      acc = -d >= 63 ? (acc < 0 ? -1 : 0) : (acc >> -d);
      e = pe;
      d = 0;
    }
    if (__builtin_expect(d >= 32, 0)) {
      if (d >= 48) {
        return;  // below the accumulator's last bit
      }
      p = (uint32_t)(p >> 32) >> (d - 32);
    } else {
      // 0 <= d < 32: lo = lo >> d | hi << (32 - d) (as (hi << 1) << (31 - d), which
      // is 0 for d == 0), hi >>= d.
      const uint32_t lo = (uint32_t)p, hi = (uint32_t)(p >> 32);
      p = ((uint64_t)(hi >> d) << 32) | ((lo >> d) | ((hi << 1) << (31 - d)));
    }
    if (negative) {
      acc -= (int64_t)p;
    } else {
      acc += (int64_t)p;
    }
  }

  /// Keeps |acc| < 2^63: products are < 2^48, so 2^14 of them always fit.
  COREV_INLINE void headroom(int32_t n) {
    count += n;
    if (__builtin_expect(count >= (1 << 14), 0)) {
      acc >>= 16;
      e += 16;
      count = 0;
    }
  }

  /// The sum rounded to float (round to nearest, ties to even).
  float result() const {
    if (acc == 0) {
      return 0.0f;
    }
    uint32_t sign = acc < 0 ? 0x80000000u : 0;
    uint64_t m = acc < 0 ? (uint64_t)0 - (uint64_t)acc : (uint64_t)acc;
    int32_t top = 63 - __builtin_clzll(m);
    int32_t exponent = top + e - 300 + 127;  // biased, of the leading bit
    if (exponent >= 255) {
      return from_bits(sign | 0x7f800000u);
    }
    int32_t shift;  // low bits to drop
    if (exponent >= 1) {
      shift = top - 23;
    } else {
      shift = 151 - e;  // subnormal: the last bit is 2^-149
      exponent = 0;
    }
    uint32_t mant;
    if (shift <= 0) {
      mant = (uint32_t)(m << -shift);
    } else if (shift >= 64) {
      mant = (shift == 64 && m > (1ull << 63)) ? 1 : 0;
    } else {
      mant = (uint32_t)(m >> shift);
      uint64_t rest = m & ((1ull << shift) - 1);
      uint64_t half = 1ull << (shift - 1);
      if (rest > half || (rest == half && (mant & 1))) {
        mant++;
      }
    }
    // Normal: the hidden bit is in mant, so a carry out of the significand
    // increments the exponent (and reaches infinity at 255) by itself.
    uint32_t out = exponent >= 1 ? ((uint32_t)(exponent - 1) << 23) + mant : mant;
    return from_bits(sign | out);
  }
};

/// Accumulates dot products; `ok` turns false on an infinity or NaN, and the caller
/// then computes that output the generic way (dot_generic).
struct Dot {
  SoftDot s;
  bool ok = true;

  /// += sum_k a[k * sa] * b[k * sb]
  COREV_INLINE void run(const float* a, ptrdiff_t sa, const float* b, ptrdiff_t sb,
                        size_t n) {
    const uint32_t* pa = reinterpret_cast<const uint32_t*>(a);
    const uint32_t* pb = reinterpret_cast<const uint32_t*>(b);
    while (n > 0) {
      size_t chunk = n < (1u << 13) ? n : (1u << 13);
      n -= chunk;
      for (size_t k = 0; k < chunk; ++k) {
        uint32_t ua = *pa;
        uint32_t ub = *pb;
        pa += sa;
        pb += sb;
        if (__builtin_expect(!s.add(ua, ub), 0)) {
          ok = false;
          return;
        }
      }
      s.headroom((int32_t)chunk);
    }
  }

  /// += a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
  COREV_INLINE void run3(const float* a, const float* b) {
    const uint32_t* pa = reinterpret_cast<const uint32_t*>(a);
    const uint32_t* pb = reinterpret_cast<const uint32_t*>(b);
#pragma GCC unroll 1
    for (int k = 0; k < 3; ++k) {
      if (__builtin_expect(!s.add(pa[k], pb[k]), 0)) {
        ok = false;
      }
    }
    s.headroom(3);
  }

  /// The sum plus *bias (if given), rounded once.
  COREV_INLINE float finish(const float* bias) {
    if (bias != nullptr && !s.add(bits(*bias), 0x3f800000u)) {
      ok = false;
    }
    return s.result();
  }
};

#else  // !COREV_SOFT_FLOAT

/// Fused multiply-adds in order; the bias is added last, as the portable kernels do.
struct Dot {
  float acc = 0.0f;
  static constexpr bool ok = true;

  COREV_INLINE void run(const float* a, ptrdiff_t sa, const float* b, ptrdiff_t sb,
                        size_t n) {
    float s = acc;
    size_t k = 0;
    for (; k + 4 <= n; k += 4) {
      s = __builtin_fmaf(a[0], b[0], s);
      s = __builtin_fmaf(a[sa], b[sb], s);
      s = __builtin_fmaf(a[2 * sa], b[2 * sb], s);
      s = __builtin_fmaf(a[3 * sa], b[3 * sb], s);
      a += 4 * sa;
      b += 4 * sb;
    }
    for (; k < n; ++k) {
      s = __builtin_fmaf(*a, *b, s);
      a += sa;
      b += sb;
    }
    acc = s;
  }

  COREV_INLINE void run3(const float* a, const float* b) {
    acc = __builtin_fmaf(a[2], b[2],
                         __builtin_fmaf(a[1], b[1], __builtin_fmaf(a[0], b[0], acc)));
  }

  COREV_INLINE float finish(const float* bias) {
    return bias != nullptr ? acc + *bias : acc;
  }
};

#endif  // COREV_SOFT_FLOAT

/// Generic (float arithmetic) dot product in order, bias last: the portable
/// kernels' arithmetic, for the outputs the soft-float path cannot take.
inline float dot_generic(const float* a, ptrdiff_t sa, const float* b, ptrdiff_t sb,
                         size_t n, const float* bias) {
  float acc = 0.0f;
  for (size_t k = 0; k < n; ++k) {
    acc += a[(ptrdiff_t)k * sa] * b[(ptrdiff_t)k * sb];
  }
  return bias != nullptr ? acc + *bias : acc;
}

/// bias + sum_k a[k * sa] * b[k * sb].
COREV_INLINE float dot(const float* a, ptrdiff_t sa, const float* b, ptrdiff_t sb,
                       size_t n, const float* bias) {
  Dot d;
  d.run(a, sa, b, sb, n);
  float r = d.finish(bias);
  if (__builtin_expect(!d.ok, 0)) {
    return dot_generic(a, sa, b, sb, n, bias);
  }
  return r;
}

/// Whether a quantize_per_tensor call is one the float32 -> int8/uint8 kernels take
/// (op_quantize.cpp, portable_fixes/op_quantize.cpp; it resizes out): the dtypes, a
/// range inside the dtype's, one dim order, and |zero_point| <= 2^20, which keeps
/// corev_quant.h's sums inside int32. The others go to the tree's kernel, which checks
/// and reports them.
inline bool quantize_takes(const Tensor& input, int64_t zero_point, int64_t quant_min,
                           int64_t quant_max, ScalarType dtype, Tensor& out) {
  const bool byte = dtype == ScalarType::Byte;
  return is_float(input) && out.scalar_type() == dtype &&
         (byte || dtype == ScalarType::Char) && quant_min >= (byte ? 0 : -128) &&
         quant_max <= (byte ? 255 : 127) && quant_min <= quant_max &&
         zero_point >= -(1 << 20) && zero_point <= (1 << 20) &&
         executorch::runtime::tensors_have_same_dim_order(input, out) &&
         executorch::runtime::resize_tensor(out, input.sizes()) ==
             executorch::runtime::Error::Ok;
}

}  // namespace util
}  // namespace native
}  // namespace corev
