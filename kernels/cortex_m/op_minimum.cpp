/*
 * cortex_m::minimum.out for tensors of any dim order (minmax.h). Stands in for
 * ExecuTorch's backends/cortex_m/ops/op_minimum.cpp (v1.4.1), which hands CMSIS-NN the
 * logical sizes whatever the dim orders: with channels-last inputs and the contiguous
 * output the passes give it, every value lands in the wrong place.
 */
#include "minmax.h"

namespace cortex_m {
namespace native {

Tensor& minimum_out(
    KernelRuntimeContext& context,
    const Tensor& input1,
    const Tensor& input2,
    Tensor& out) {
  return minmax::binary_out(
      context, "minimum_out",
      [](const int8_t* a, const cmsis_nn_dims* a_dims, const int8_t* b,
         const cmsis_nn_dims* b_dims, int8_t* out_data, const cmsis_nn_dims* out_dims) {
        return arm_minimum_s8(nullptr, a, a_dims, b, b_dims, out_data, out_dims);
      },
      [](int8_t x, int8_t y) { return x < y ? x : y; }, input1, input2, out);
}

} // namespace native
} // namespace cortex_m
