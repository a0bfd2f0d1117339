/*
 * cortex_m::minimum and cortex_m::maximum, for tensors of any dim order (layout.h):
 * CMSIS-NN's arm_minimum_s8 / arm_maximum_s8 when the inputs and the output share one
 * dim order (their sizes given in memory order), else an element at a time through the
 * strides. The values are int8, compared as they are (the quantizer gives both inputs
 * and the output one quantization), as the dialect's reference does.
 */
#pragma once

#include "layout.h"

namespace cortex_m {
namespace native {
namespace minmax {

// cmsis_nn_dims of a tensor's sizes in memory order, right-aligned to 4.
inline bool dims_of(const Tensor& t, cmsis_nn_dims* dims) {
  if (t.dim() > 4) {
    return false;
  }
  int32_t sizes[4] = {1, 1, 1, 1};
  layout::memory_sizes(t, sizes + (4 - t.dim()));
  *dims = {sizes[0], sizes[1], sizes[2], sizes[3]};
  return true;
}

// cmsis: CMSIS-NN's function, called from the operator's own file (so that the build
// finds which CMSIS-NN file it needs); pick: the same for two values.
template <typename Cmsis, typename Pick>
Tensor& binary_out(
    KernelRuntimeContext& context,
    const char* name,
    Cmsis cmsis,
    Pick pick,
    const Tensor& a,
    const Tensor& b,
    Tensor& out) {
  if (!layout::int8_binary_args(context, name, a, b, out)) {
    return out;
  }
  const int8_t* a_data = a.const_data_ptr<int8_t>();
  const int8_t* b_data = b.const_data_ptr<int8_t>();
  int8_t* out_data = out.mutable_data_ptr<int8_t>();

  cmsis_nn_dims a_dims, b_dims, out_dims;
  if (layout::same_dim_order(a, out) && layout::same_dim_order(b, out) &&
      dims_of(a, &a_dims) && dims_of(b, &b_dims) && dims_of(out, &out_dims)) {
    if (cmsis(a_data, &a_dims, b_data, &b_dims, out_data, &out_dims) !=
        ARM_CMSIS_NN_SUCCESS) {
      ET_LOG(Error, "%s: CMSIS-NN failed", name);
      context.fail(Error::Internal);
    }
    return out;
  }
  if (out.numel() == 0) {
    return out;
  }
  int64_t index[layout::kMaxDims] = {0};
  do {
    const int8_t x = a_data[layout::offset_of(a, index, out.dim())];
    const int8_t y = b_data[layout::offset_of(b, index, out.dim())];
    out_data[layout::offset_of(out, index, out.dim())] = pick(x, y);
  } while (layout::next_index(index, out));
  return out;
}

} // namespace minmax
} // namespace native
} // namespace cortex_m
