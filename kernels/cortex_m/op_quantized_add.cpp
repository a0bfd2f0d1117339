/*
 * cortex_m::quantized_add.out for tensors of any dim order (elementwise.h). Stands in
 * for ExecuTorch's backends/cortex_m/ops/op_quantized_add.cpp (v1.4.1), which walks its
 * tensors as flat memory whatever their dim orders: a residual branch that comes back
 * from a float operator gives it a channels-last input and a contiguous output, and
 * every value lands in the wrong place. The arithmetic is the tree's: CMSIS-NN's
 * arm_elementwise_add_s8 with the exporter's multipliers and shifts, the inputs shifted
 * left by 20 first, offsets the negated zero points.
 */
#include "elementwise.h"

namespace cortex_m {
namespace native {

Tensor& quantized_add_out(
    KernelRuntimeContext& context,
    const Tensor& input1_int8,
    const int64_t input1_zero_point,
    const int64_t input1_multiplier,
    const int64_t input1_shift,
    const Tensor& input2_int8,
    const int64_t input2_zero_point,
    const int64_t input2_multiplier,
    const int64_t input2_shift,
    const int64_t output_zero_point,
    const int64_t output_multiplier,
    const int64_t output_shift,
    const int64_t activation_min,
    const int64_t activation_max,
    Tensor& out) {
  validate_quantization_params(
      input1_zero_point, input1_multiplier, input1_shift, input2_zero_point,
      input2_multiplier, input2_shift, output_zero_point, output_multiplier, output_shift);
  // The tree's left shift: the inputs are scaled up before their requantization.
  constexpr int32_t kLeftShift = 20;
  struct Input {
    int32_t offset, multiplier, shift;
  };
  const Input first = {-static_cast<int32_t>(input1_zero_point),
                       static_cast<int32_t>(input1_multiplier),
                       static_cast<int32_t>(input1_shift)};
  const Input second = {-static_cast<int32_t>(input2_zero_point),
                        static_cast<int32_t>(input2_multiplier),
                        static_cast<int32_t>(input2_shift)};
  return elementwise::binary_out(
      context, "quantized_add_out",
      [&](const int8_t* a, const int8_t* b, int8_t* o, int32_t n, bool swapped) {
        const Input& p = swapped ? second : first;
        const Input& q = swapped ? first : second;
        return arm_elementwise_add_s8(
                   a, b, p.offset, p.multiplier, p.shift, q.offset, q.multiplier, q.shift,
                   kLeftShift, o, static_cast<int32_t>(output_zero_point),
                   static_cast<int32_t>(output_multiplier),
                   static_cast<int32_t>(output_shift), static_cast<int32_t>(activation_min),
                   static_cast<int32_t>(activation_max), n) == ARM_CMSIS_NN_SUCCESS;
      },
      input1_int8, input2_int8, out);
}

} // namespace native
} // namespace cortex_m
