/*
 * cortex_m::quantize_per_tensor.out for the CORE-V core: float32 to int8, the
 * operator int8 networks exported through ExecuTorch's Cortex-M backend start with.
 * ExecuTorch's kernel (backends/cortex_m/ops/op_quantize_per_tensor.cpp) computes
 * q = clamp(zero_point + nearbyint(inv_scale * x)), inv_scale = 1.0f / float(scale),
 * in float: without an FPU a __mulsf3 and a nearbyintf per element, 340 instructions.
 * This kernel gives the same bytes: without an FPU by corev_quant.h's integer
 * arithmetic (one 32-bit multiply an element, the exact product near a tie, the
 * library's own expression for what it does not cover); with an FPU by fmul.s and
 * a round-to-nearest-even conversion. Like ExecuTorch's kernel it works on the
 * elements in memory order (any dim order). int16 outputs and invalid arguments go
 * to ExecuTorch's kernel, which checks and reports them as before.
 */
#include <cmath>

#include "../corev/corev_quant.h"
#include "../corev/corev_util.h"
#include "../corev/portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

namespace {

/// ExecuTorch's cortex_m expression (before the clamp), for the rare elements; products
/// beyond int32 saturate as the dialect's reference does, where the kernel's cast to
/// int32 is undefined (corev_quant.h, cv_quant_saturated).
int32_t cortex_m_generic(float inv_scale, int32_t zero_point, float x) {
  return cv_quant_saturated(inv_scale, zero_point, x);
}

}  // namespace

Tensor& cortex_m_quantize_per_tensor_out(KernelRuntimeContext& ctx,
                                         const Tensor& input, double scale,
                                         int64_t zero_point, int64_t quant_min,
                                         int64_t quant_max, ScalarType dtype,
                                         Tensor& out) {
  if (!(util::is_float(input) && dtype == ScalarType::Char &&
        out.scalar_type() == ScalarType::Char && quant_min >= -128 &&
        quant_max <= 127 && quant_min <= quant_max &&
        executorch::runtime::resize_tensor(out, input.sizes()) ==
            executorch::runtime::Error::Ok)) {
    COREV_FALLBACK(ctx, out,
                   cortex_m::native::quantize_per_tensor_out(
                       ctx, input, scale, zero_point, quant_min, quant_max, dtype,
                       out));
  }
  const float inv_scale = 1.0f / static_cast<float>(scale);
  const float* in = input.const_data_ptr<float>();
  int8_t* q = out.mutable_data_ptr<int8_t>();
  const int32_t n = static_cast<int32_t>(input.numel());
  const int32_t zp = static_cast<int32_t>(zero_point);
  const int32_t qmin = static_cast<int32_t>(quant_min);
  const int32_t qmax = static_cast<int32_t>(quant_max);
#if COREV_SOFT_FLOAT
  cv_quantize(in, reinterpret_cast<uint8_t*>(q), n, inv_scale, zp, qmin, qmax,
              cortex_m_generic);
#else
  for (int32_t i = 0; i < n; ++i) {
    const float v = inv_scale * in[i];
    int32_t r;
    if (__builtin_expect(v > -1e9f && v < 1e9f, 1)) {
#if defined(__riscv_flen)
      int32_t t;
      __asm__("fcvt.w.s %0, %1, rne" : "=r"(t) : "f"(v));
      r = zp + t;
#else
      r = cortex_m_generic(inv_scale, zp, in[i]);
#endif
    } else {
      r = cortex_m_generic(inv_scale, zp, in[i]);
    }
    r = r < qmin ? qmin : r;
    q[i] = static_cast<int8_t>(r > qmax ? qmax : r);
  }
#endif
  return out;
}

}  // namespace native
}  // namespace corev
