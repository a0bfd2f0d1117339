/*
 * cortex_m::quantized_mul.out for tensors of any dim order (elementwise.h). Stands in
 * for ExecuTorch's backends/cortex_m/ops/op_quantized_mul.cpp (v1.4.1), which walks its
 * tensors as flat memory whatever their dim orders (see op_quantized_add.cpp). The
 * arithmetic is the tree's: CMSIS-NN's arm_elementwise_mul_s8, offsets the negated zero
 * points, the exporter's output multiplier and shift, the full int8 range.
 */
#include "elementwise.h"

#include <limits>

namespace cortex_m {
namespace native {

Tensor& quantized_mul_out(
    KernelRuntimeContext& context,
    const Tensor& input1_int8,
    const int64_t input1_zero_point,
    const Tensor& input2_int8,
    const int64_t input2_zero_point,
    const int64_t output_zero_point,
    const int64_t output_multiplier,
    const int64_t output_shift,
    Tensor& out) {
  validate_quantization_params(input1_zero_point, 1, 0, input2_zero_point, 1, 0,
                               output_zero_point, output_multiplier, output_shift);
  const int32_t offset1 = -static_cast<int32_t>(input1_zero_point);
  const int32_t offset2 = -static_cast<int32_t>(input2_zero_point);
  return elementwise::binary_out(
      context, "quantized_mul_out",
      [&](const int8_t* a, const int8_t* b, int8_t* o, int32_t n, bool swapped) {
        return arm_elementwise_mul_s8(
                   a, b, swapped ? offset2 : offset1, swapped ? offset1 : offset2, o,
                   static_cast<int32_t>(output_zero_point),
                   static_cast<int32_t>(output_multiplier),
                   static_cast<int32_t>(output_shift), std::numeric_limits<int8_t>::min(),
                   std::numeric_limits<int8_t>::max(), n) == ARM_CMSIS_NN_SUCCESS;
      },
      input1_int8, input2_int8, out);
}

} // namespace native
} // namespace cortex_m
