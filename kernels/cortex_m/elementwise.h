/*
 * cortex_m::quantized_add and quantized_mul for tensors of any dim order (layout.h).
 *
 * ExecuTorch v1.4.1's kernels walk their tensors as flat memory (one shape for all
 * three), or a 4-D channels-last tensor in rows of its channels against a per-channel
 * operand; they do not look at the dim orders (cortex_m_ops_common.h: "TBD: Validate
 * dim_order"). The Cortex-M passes do give an addition tensors of different layouts: a
 * residual whose other branch leaves int8 for a float operator the quantizer does not
 * annotate (an adaptive average pool, say) and comes back through a dim-order copy gets
 * a channels-last self and a contiguous out. There the tree's kernel puts every value in
 * the wrong place.
 *
 * Here: the tree's two walks where the layouts are theirs, else an element at a time
 * through the strides, each element by CMSIS-NN's own function over one element (the
 * same arithmetic, so the same bytes; about a hundred cycles an element, for calls that
 * would otherwise be wrong).
 */
#pragma once

#include "layout.h"

namespace cortex_m {
namespace native {
namespace elementwise {

// cmsis(a, b, out, n, swapped): CMSIS-NN's function over n elements of a and b (b
// repeated when it is the per-channel operand); swapped: a and b are the operator's
// inputs in the other order (the per-channel one was the first), so the caller swaps
// their parameters too.
template <typename Cmsis>
Tensor& binary_out(
    KernelRuntimeContext& context,
    const char* name,
    Cmsis cmsis,
    const Tensor& input1,
    const Tensor& input2,
    Tensor& out) {
  if (!layout::int8_binary_args(context, name, input1, input2, out)) {
    return out;
  }
  const int8_t* a = input1.const_data_ptr<int8_t>();
  const int8_t* b = input2.const_data_ptr<int8_t>();
  int8_t* o = out.mutable_data_ptr<int8_t>();
  const int32_t n = static_cast<int32_t>(out.numel());
  if (n == 0) {
    return out;
  }
  const bool swapped = input1.numel() < input2.numel();
  const Tensor& big = swapped ? input2 : input1;
  bool ok = true;
  if (layout::same_memory_order(input1, out) && layout::same_memory_order(input2, out)) {
    // one shape, one layout (dim orders that differ only where sizes are 1): flat memory
    ok = cmsis(a, b, o, n, false);
  } else if (is_channel_broadcast(input1, input2) && layout::innermost(big, 1) &&
             layout::same_memory_order(big, out)) {
    // a per-channel operand against a channels-last 4-D tensor and output: rows of its
    // channels (the tree's walk)
    const int32_t channels = static_cast<int32_t>(big.size(1));
    const int8_t* rows = swapped ? b : a;
    const int8_t* per_channel = swapped ? a : b;
    for (int32_t at = 0; ok && at < n; at += channels) {
      ok = cmsis(rows + at, per_channel, o + at, channels, swapped);
    }
  } else {
    // any other layouts: element by element through the strides
    int64_t index[layout::kMaxDims] = {0};
    do {
      ok = cmsis(a + layout::offset_of(input1, index, out.dim()),
                 b + layout::offset_of(input2, index, out.dim()),
                 o + layout::offset_of(out, index, out.dim()), 1, false);
    } while (ok && layout::next_index(index, out));
  }
  if (!ok) {
    ET_LOG(Error, "%s: CMSIS-NN failed", name);
    context.fail(Error::Internal);
  }
  return out;
}

} // namespace elementwise
} // namespace native
} // namespace cortex_m
