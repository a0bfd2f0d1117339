/*
 * cortex_m::dequantize_per_tensor.out for the CORE-V core: int8 to float32, the
 * operator int8 networks exported through ExecuTorch's Cortex-M backend end with.
 * ExecuTorch's kernel (backends/cortex_m/ops/op_dequantize_per_tensor.cpp) computes
 * float(q - zero_point) * float(scale): without an FPU an __floatsisf and a __mulsf3
 * per element. This kernel gives the same bits: without an FPU by corev_quant.h's
 * integer arithmetic (one 32-bit multiply an element, or a table of the 256 results
 * for large tensors); with an FPU by fcvt.s.w and fmul.s. Like ExecuTorch's kernel it
 * works on the elements in memory order (any dim order). int16 inputs, a zero point
 * outside int8 or a scale that is zero, subnormal, infinite or NaN, and invalid
 * arguments go to ExecuTorch's kernel, which checks and reports them as before.
 */
#include "../corev/corev_quant.h"
#include "../corev/corev_util.h"
#include "../corev/portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

Tensor& cortex_m_dequantize_per_tensor_out(KernelRuntimeContext& ctx,
                                           const Tensor& input, double scale,
                                           int64_t zero_point, int64_t quant_min,
                                           int64_t quant_max, ScalarType dtype,
                                           Tensor& out) {
  const float s = static_cast<float>(scale);
  if (!(dtype == ScalarType::Char && input.scalar_type() == ScalarType::Char &&
        util::is_float(out) && quant_min >= -128 && quant_max <= 127 &&
        zero_point >= quant_min && zero_point <= quant_max &&
#if COREV_SOFT_FLOAT
        cv_dequant_make(s).ok &&
#endif
        executorch::runtime::resize_tensor(out, input.sizes()) ==
            executorch::runtime::Error::Ok)) {
    COREV_FALLBACK(ctx, out,
                   cortex_m::native::dequantize_per_tensor_out(
                       ctx, input, scale, zero_point, quant_min, quant_max, dtype,
                       out));
  }
  const int8_t* in = input.const_data_ptr<int8_t>();
  const int32_t n = static_cast<int32_t>(input.numel());
  const int32_t zp = static_cast<int32_t>(zero_point);
#if COREV_SOFT_FLOAT
  uint32_t table[256];
  cv_dequantize_s8(in, reinterpret_cast<uint32_t*>(out.mutable_data_ptr<float>()), n,
                   s, zp, table);
#else
  float* o = out.mutable_data_ptr<float>();
  for (int32_t i = 0; i < n; ++i) {
    o[i] = static_cast<float>(static_cast<int32_t>(in[i]) - zp) * s;
  }
#endif
  return out;
}

}  // namespace native
}  // namespace corev
