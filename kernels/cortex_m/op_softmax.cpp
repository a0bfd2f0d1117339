/*
 * cortex_m::softmax.out over a dimension that may not be innermost in memory. Stands in
 * for ExecuTorch's backends/cortex_m/ops/op_softmax.cpp (v1.4.1), which hands CMSIS-NN
 * the tensor as rows of the last logical dimension: right for contiguous tensors, wrong
 * for a channels-last 4-D one, whose last logical dimension (W) is not contiguous.
 *
 * When the dimension is innermost in memory in both tensors and they share a dim order,
 * arm_softmax_s8 takes them whole. Otherwise each row is gathered through the input's
 * strides into a buffer from the runner's temp allocator (twice the row, which the
 * build sizes the pool for: etcorev.executorch.cortex_m_forms), softmaxed there and
 * scattered to the output.
 */
#include "layout.h"

namespace cortex_m {
namespace native {

namespace {
// CMSIS-NN's softmax writes int8 with this zero point (scale 1/256).
constexpr int32_t kSoftmaxOutputZeroPoint = -128;
} // namespace

Tensor& softmax_out(
    KernelRuntimeContext& context,
    const Tensor& input,
    int64_t dim,
    int64_t input_zero_point,
    int64_t output_zero_point,
    int64_t input_multiplier,
    int64_t input_shift,
    int64_t diff_min,
    Tensor& out) {
  (void)input_zero_point;   // the softmax of differences does not depend on it
  const int64_t d = dim < 0 ? dim + input.dim() : dim;
  if (input.scalar_type() != ScalarType::Char || out.scalar_type() != ScalarType::Char ||
      d < 0 || d >= input.dim() || out.dim() != input.dim() ||
      output_zero_point != kSoftmaxOutputZeroPoint || input.numel() != out.numel()) {
    ET_LOG(Error, "softmax_out: int8 tensors of one shape, a dimension of theirs and the "
                  "output zero point %d expected", static_cast<int>(kSoftmaxOutputZeroPoint));
    context.fail(Error::InvalidArgument);
    return out;
  }
  const int32_t row_size = static_cast<int32_t>(input.size(d));
  if (row_size == 0) {
    return out;
  }
  const int32_t rows = static_cast<int32_t>(input.numel() / row_size);
  const int32_t multiplier = static_cast<int32_t>(input_multiplier);
  const int32_t shift = static_cast<int32_t>(input_shift);
  const int32_t min_difference = static_cast<int32_t>(diff_min);
  const int8_t* in_data = input.const_data_ptr<int8_t>();
  int8_t* out_data = out.mutable_data_ptr<int8_t>();

  if (layout::innermost(input, d) && layout::same_dim_order(input, out)) {
    arm_softmax_s8(in_data, rows, row_size, multiplier, shift, min_difference, out_data);
    return out;
  }
  auto buffer = context.allocate_temp(2 * static_cast<size_t>(row_size), 4);
  if (!buffer.ok()) {
    ET_LOG(Error, "softmax_out: the temp pool cannot give the %d bytes of a row's buffer",
           static_cast<int>(2 * row_size));
    context.fail(Error::MemoryAllocationFailed);
    return out;
  }
  int8_t* row_in = static_cast<int8_t*>(buffer.get());
  int8_t* row_out = row_in + row_size;
  const size_t in_step = static_cast<size_t>(input.strides()[d]);
  const size_t out_step = static_cast<size_t>(out.strides()[d]);
  int64_t index[layout::kMaxDims] = {0};
  do {
    const int8_t* from = in_data + layout::offset_of(input, index, input.dim());
    int8_t* to = out_data + layout::offset_of(out, index, out.dim());
    for (int32_t i = 0; i < row_size; i++) {
      row_in[i] = from[i * in_step];
    }
    arm_softmax_s8(row_in, 1, row_size, multiplier, shift, min_difference, row_out);
    for (int32_t i = 0; i < row_size; i++) {
      to[i * out_step] = row_out[i];
    }
  } while (layout::next_index(index, input, d));
  return out;
}

} // namespace native
} // namespace cortex_m
