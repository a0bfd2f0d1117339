/*
 * quantized_decomposed::quantize_per_tensor.out from float32 to int8 or uint8. The
 * operator's reference (torch/ao/quantization/fx/_decomposed.py) clamps
 * round(x * inv_scale) + zero_point to [quant_min, quant_max] in float, so a value whose
 * scaled product is beyond any integer range (3.4e38, an infinity) gives quant_max or
 * quant_min by its sign. ExecuTorch v1.4.1's kernel (kernels/quantized/cpu/
 * op_quantize.cpp, quantize_val) casts the float product to int64 before clamping,
 * which C leaves undefined beyond int64's range: with isa=rv32imfc libgcc's conversion
 * gave -1 for 3.4e38 * 20, so the element came out as -1 with exit status 0 (x86 gives
 * INT64_MIN, quant_min for +inf). Here every element is computed as the kernel does
 * where that is defined, saturated where not (corev_quant.h, cv_quant_saturated: NaN
 * gives 0, what the reference's cast gives on x86). The CORE-V kernel (kernels/corev)
 * does the same faster; this one is for corev_kernels=0. Other dtypes, dim orders that
 * differ and invalid arguments go to the tree's kernel, which checks and reports them.
 */
#include <executorch/runtime/kernel/kernel_includes.h>

#include "../corev/corev_quant.h"
#include "../corev/corev_util.h"
// kernels/quantized/cpu/op_quantize.cpp, compiled beside this file (fallback: true)
#include "../corev/portable_fallback.h"

namespace portable_fixes {
namespace native {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

namespace {

template <typename T>
void quantize(const float* in, T* out, size_t n, float inv_scale, int32_t zero_point,
              int32_t qmin, int32_t qmax) {
  for (size_t i = 0; i < n; ++i) {
    int32_t q = cv_quant_saturated(inv_scale, zero_point, in[i]);
    q = q < qmin ? qmin : q;
    out[i] = static_cast<T>(q > qmax ? qmax : q);
  }
}

}  // namespace

Tensor& quantize_per_tensor_out(KernelRuntimeContext& ctx, const Tensor& input,
                                double scale, int64_t zero_point, int64_t quant_min,
                                int64_t quant_max, ScalarType dtype, Tensor& out) {
  const bool byte = dtype == ScalarType::Byte;
  if (!corev::native::util::quantize_takes(input, zero_point, quant_min, quant_max, dtype,
                                           out)) {
    return torch::executor::native::quantize_per_tensor_out(
        ctx, input, scale, zero_point, quant_min, quant_max, dtype, out);
  }
  const float inv_scale = 1.0f / static_cast<float>(scale);
  const size_t n = static_cast<size_t>(input.numel());
  if (byte) {
    quantize(input.const_data_ptr<float>(), out.mutable_data_ptr<uint8_t>(), n, inv_scale,
             static_cast<int32_t>(zero_point), static_cast<int32_t>(quant_min),
             static_cast<int32_t>(quant_max));
  } else {
    quantize(input.const_data_ptr<float>(), out.mutable_data_ptr<int8_t>(), n, inv_scale,
             static_cast<int32_t>(zero_point), static_cast<int32_t>(quant_min),
             static_cast<int32_t>(quant_max));
  }
  return out;
}

}  // namespace native
}  // namespace portable_fixes
