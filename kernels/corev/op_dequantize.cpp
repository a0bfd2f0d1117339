/*
 * quantized_decomposed::dequantize_per_tensor.out for the CORE-V core: int8 (Char)
 * or uint8 (Byte) to float32, in and out with one dim order, no other out_dtype.
 * The quantized library's arithmetic, out = float(x - zero_point) * float(scale), is
 * reproduced bit for bit: without an FPU on the bits (the integer times the 24-bit
 * significand of the scale in 32-bit arithmetic, rounded once to nearest even), with
 * an FPU by fcvt.s.w and fmul.s. A scale that is zero, subnormal, infinite or NaN, or
 * a zero point beyond +-255, takes the float expression. Other dtypes: the quantized library's kernel.
 */
#include "corev_quant.h"
#include "corev_util.h"
#include "portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

namespace {

#if COREV_SOFT_FLOAT
/// floor(log2(i)) for 0 < i < 256.
struct Log2Table {
  uint8_t v[256];
  constexpr Log2Table() : v() {
    for (int i = 2; i < 256; ++i) {
      v[i] = v[i / 2] + 1;
    }
  }
};
constexpr Log2Table kLog2;

/// float(q) * scale rounded once, for a normal scale (significand ms with the hidden
/// bit, biased exponent es, sign bit) and 0 < |q| < 512, in 32-bit arithmetic: |q| is
/// normalised to 9 bits, so its product with the 24-bit significand has 32 or 33 bits.
COREV_INLINE uint32_t scale_int(int32_t q, uint32_t ms, uint32_t es, uint32_t sign) {
  if (q == 0) {
    return sign;  // +-0, with the sign of the scale
  }
  uint32_t s = sign;
  uint32_t a = (uint32_t)q;
  if (q < 0) {
    s ^= 0x80000000u;
    a = 0u - a;
  }
  const uint32_t l = a >= 256 ? 8 : kLog2.v[a];  // leading bit of a
  const uint32_t an = a << (8 - l);               // 256 .. 511
  const uint32_t lo = an * ms;
  const uint32_t hi = (uint32_t)(((uint64_t)an * ms) >> 32);  // 0 or 1
  uint32_t m, rest, half, drop;
  if (hi != 0) {
    drop = 9;
    m = (lo >> 9) | (1u << 23);
    rest = lo & 0x1ff;
    half = 0x100;
  } else {
    drop = 8;
    m = lo >> 8;
    rest = lo & 0xff;
    half = 0x80;
  }
  if (rest > half || (rest == half && (m & 1))) {
    ++m;  // a carry to 2^24 moves into the exponent below
  }
  const uint32_t e = es + l + drop - 8;  // biased exponent of m * 2^-23
  if (e >= 255) {
    return s | 0x7f800000u;
  }
  const uint32_t out = ((e - 1) << 23) + m;
  return s | (out >= 0x7f800000u ? 0x7f800000u : out);
}
#endif

template <typename T>
COREV_HOT void dequantize(const T* in, float* out, size_t n, int32_t zero_point,
                          float scale) {
#if COREV_SOFT_FLOAT
  const uint32_t us = util::bits(scale);
  const uint32_t es = (us >> 23) & 0xff;
  if (__builtin_expect(es - 1u < 254u, 1)) {
    // |q - zero_point| < 256 for every q: one 32-bit multiply an element
    // (corev_quant.h), or a table of the 256 results for large tensors.
    uint32_t table[256];
    if (sizeof(T) == 1 && (T)-1 < 0 && zero_point >= -128 && zero_point <= 127) {
      cv_dequantize_s8(reinterpret_cast<const int8_t*>(in),
                       reinterpret_cast<uint32_t*>(out), (int32_t)n, scale,
                       zero_point, table);
      return;
    }
    if ((T)-1 > 0 && zero_point >= 0 && zero_point <= 255) {
      cv_dequantize_u8(reinterpret_cast<const uint8_t*>(in),
                       reinterpret_cast<uint32_t*>(out), (int32_t)n, scale,
                       zero_point, table);
      return;
    }
  }
  if (__builtin_expect(es - 1u < 254u && zero_point >= -255 && zero_point <= 255, 1)) {
    const uint32_t ms = (us & 0x7fffff) | 0x800000;
    const uint32_t sign = us & 0x80000000u;
    uint32_t* o = reinterpret_cast<uint32_t*>(out);
    for (size_t i = 0; i < n; ++i) {
      o[i] = scale_int((int32_t)in[i] - zero_point, ms, es, sign);
    }
    return;
  }
#endif
  for (size_t i = 0; i < n; ++i) {
    out[i] = static_cast<float>((int32_t)in[i] - zero_point) * scale;
  }
}

}  // namespace

Tensor& dequantize_per_tensor_out(KernelRuntimeContext& ctx, const Tensor& input,
                                  double scale, int64_t zero_point,
                                  int64_t quant_min, int64_t quant_max,
                                  ScalarType dtype,
                                  std::optional<ScalarType> out_dtype,
                                  Tensor& out) {
  const ScalarType in_type = input.scalar_type();
  if (!((in_type == ScalarType::Char || in_type == ScalarType::Byte) &&
        in_type == dtype && util::is_float(out) &&
        (!out_dtype.has_value() || out_dtype.value() == ScalarType::Float) &&
        quant_min <= quant_max && zero_point >= -(1 << 20) &&
        zero_point <= (1 << 20) &&
        executorch::runtime::tensors_have_same_dim_order(input, out) &&
        executorch::runtime::resize_tensor(out, input.sizes()) ==
            executorch::runtime::Error::Ok)) {
    COREV_FALLBACK(ctx, out,
                   torch::executor::native::dequantize_per_tensor_out(
                       ctx, input, scale, zero_point, quant_min, quant_max, dtype,
                       out_dtype, out));
  }
  const float s = static_cast<float>(scale);
  if (in_type == ScalarType::Byte) {
    dequantize(input.const_data_ptr<uint8_t>(), out.mutable_data_ptr<float>(),
               input.numel(), (int32_t)zero_point, s);
  } else {
    dequantize(input.const_data_ptr<int8_t>(), out.mutable_data_ptr<float>(),
               input.numel(), (int32_t)zero_point, s);
  }
  return out;
}

}  // namespace native
}  // namespace corev
