/*
 * quantized_decomposed::quantize_per_tensor.out for the CORE-V core: float32 to
 * int8 (Char) or uint8 (Byte), in and out with one dim order. The quantized
 * library's arithmetic, q = clamp(zero_point + nearbyint(float(inv_scale * x))),
 * inv_scale = 1.0f / float(scale), is reproduced bit for bit: without an FPU in
 * integer arithmetic (corev_quant.h: one 32-bit multiply an element, the exact
 * product near a tie); with an FPU by fmul.s and a round-to-nearest-even conversion.
 * NaN, infinities, subnormal inputs and out-of-range products take the library's
 * float expression, saturated as the operator's reference does it (the library casts
 * to int64, undefined beyond its range: corev_quant.h, cv_quant_saturated). Other
 * dtypes: the quantized library's kernel.
 */
#include <cmath>

#include "corev_quant.h"
#include "corev_util.h"
#include "portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

namespace {

/// The operator's expression, for the rare elements: the quantized library's, but
/// products beyond int32 saturate where the library's cast to int64 is undefined
/// (cv_quant_saturated).
int32_t quantize_generic(float inv_scale, int32_t zero_point, float x) {
  return cv_quant_saturated(inv_scale, zero_point, x);
}


template <typename T>
COREV_HOT void quantize(const float* in, T* out, size_t n, float inv_scale,
                        int32_t zero_point, int32_t qmin, int32_t qmax) {
#if COREV_SOFT_FLOAT
  cv_quantize(in, reinterpret_cast<uint8_t*>(out), (int32_t)n, inv_scale, zero_point,
              qmin, qmax, quantize_generic);
#else
  for (size_t i = 0; i < n; ++i) {
    const float v = inv_scale * in[i];
    int32_t q;
    if (__builtin_expect(v > -1e9f && v < 1e9f, 1)) {
#if defined(__riscv_flen)
      int32_t r;
      __asm__("fcvt.w.s %0, %1, rne" : "=r"(r) : "f"(v));
      q = zero_point + r;
#else
      q = zero_point + (int32_t)std::nearbyint(v);
#endif
    } else {
      q = quantize_generic(inv_scale, zero_point, in[i]);
    }
    q = q < qmin ? qmin : q;
    q = q > qmax ? qmax : q;
    out[i] = (T)q;
  }
#endif
}

}  // namespace

Tensor& quantize_per_tensor_out(KernelRuntimeContext& ctx, const Tensor& input,
                                double scale, int64_t zero_point, int64_t quant_min,
                                int64_t quant_max, ScalarType dtype, Tensor& out) {
  const bool byte = dtype == ScalarType::Byte;
  if (!util::quantize_takes(input, zero_point, quant_min, quant_max, dtype, out)) {
    COREV_FALLBACK(ctx, out,
                   torch::executor::native::quantize_per_tensor_out(
                       ctx, input, scale, zero_point, quant_min, quant_max, dtype,
                       out));
  }
  const float inv_scale = 1.0f / static_cast<float>(scale);
  if (byte) {
    quantize(input.const_data_ptr<float>(), out.mutable_data_ptr<uint8_t>(),
             input.numel(), inv_scale, (int32_t)zero_point, (int32_t)quant_min,
             (int32_t)quant_max);
  } else {
    quantize(input.const_data_ptr<float>(), out.mutable_data_ptr<int8_t>(),
             input.numel(), inv_scale, (int32_t)zero_point, (int32_t)quant_min,
             (int32_t)quant_max);
  }
  return out;
}

}  // namespace native
}  // namespace corev
