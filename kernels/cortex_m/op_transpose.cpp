/*
 * cortex_m::transpose.out (an int8 permute) for tensors of any dim order. Stands in for
 * ExecuTorch's backends/cortex_m/ops/op_transpose.cpp (v1.4.1), which permutes the
 * input's memory as if input and output were contiguous: a channels-last 4-D input (and
 * the contiguous output the passes give it) comes out scrambled.
 *
 * CMSIS-NN's arm_transpose_s8 permutes memory; here it gets both tensors in memory order
 * (layout.h): output memory axis k is logical output dimension d = out.dim_order[k],
 * which is logical input dimension perm[d], found at input memory axis
 * position(in.dim_order, perm[d]). When that permutation is the identity (a
 * channels-last input permuted to NHWC into a contiguous output) the bytes are copied.
 */
#include "layout.h"

namespace cortex_m {
namespace native {

Tensor& transpose_out(
    KernelRuntimeContext& context,
    const Tensor& input,
    const Int64ArrayRef perm,
    Tensor& out) {
  const ssize_t rank = input.dim();
  if (input.scalar_type() != ScalarType::Char || out.scalar_type() != ScalarType::Char ||
      rank < 1 || rank > 4 || out.dim() != rank ||
      static_cast<ssize_t>(perm.size()) != rank) {
    ET_LOG(Error, "transpose_out: int8 tensors of one rank from 1 to 4 and a permutation "
                  "of that rank expected");
    context.fail(Error::InvalidArgument);
    return out;
  }
  int32_t position[4];         // of each logical input dimension in memory
  for (ssize_t k = 0; k < rank; k++) {
    position[input.dim_order()[k]] = static_cast<int32_t>(k);
  }
  uint32_t memory_perm[4] = {0, 1, 2, 3};
  bool identity = true;
  for (ssize_t k = 0; k < rank; k++) {
    const int64_t d = out.dim_order()[k];
    if (perm[d] < 0 || perm[d] >= rank || out.size(d) != input.size(perm[d])) {
      ET_LOG(Error, "transpose_out: the output's sizes are not the permuted input's");
      context.fail(Error::InvalidArgument);
      return out;
    }
    memory_perm[k] = static_cast<uint32_t>(position[perm[d]]);
    identity = identity && memory_perm[k] == static_cast<uint32_t>(k);
  }
  if (identity) {
    std::memcpy(out.mutable_data_ptr<int8_t>(), input.const_data_ptr<int8_t>(),
                input.nbytes());
    return out;
  }
  int32_t in_sizes[4] = {1, 1, 1, 1};
  int32_t out_sizes[4] = {1, 1, 1, 1};
  layout::memory_sizes(input, in_sizes);
  layout::memory_sizes(out, out_sizes);
  // As ExecuTorch's kernel gives them: the first `rank` of (n, h, w, c).
  const cmsis_nn_dims input_dims = {in_sizes[0], in_sizes[1], in_sizes[2], in_sizes[3]};
  const cmsis_nn_dims output_dims = {out_sizes[0], out_sizes[1], out_sizes[2], out_sizes[3]};
  const cmsis_nn_transpose_params params = {static_cast<int32_t>(rank), memory_perm};
  if (arm_transpose_s8(input.const_data_ptr<int8_t>(), out.mutable_data_ptr<int8_t>(),
                       &input_dims, &output_dims, &params) != ARM_CMSIS_NN_SUCCESS) {
    ET_LOG(Error, "transpose_out: arm_transpose_s8 failed");
    context.fail(Error::Internal);
  }
  return out;
}

} // namespace native
} // namespace cortex_m
