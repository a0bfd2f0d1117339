/*
 * cortex_m::quantized_transpose_conv2d.out with PyTorch's padding. Stands in for
 * ExecuTorch's backends/cortex_m/ops/op_quantized_transpose_conv2d.cpp (v1.4.1) in every
 * build of this repository (kernels/cortex_m/README.md).
 *
 * Why: with 16 input channels or fewer (or a stride above 2) CMSIS-NN takes its column
 * path, arm_transpose_conv_s8, which crops the padding off the top rows by skipping
 * them in its rolling buffer of output rows: with padding 1 and stride 2 the rows of
 * later inputs land one row too high, and every value of the layer is wrong (120 steps
 * off for ConvTranspose2d(4, 6, 3, stride=2, padding=1)). Its right and left cropping,
 * and the padding of the other path (a convolution of the upscaled input), are right.
 *
 * Here a padded layer on the column path is computed without padding, into a buffer
 * from the runner's temp allocator (the whole uncropped output, which the build sizes
 * the pool for: etcorev.executorch.cortex_m_forms), and the padding is cropped off while
 * copying the output out: the values are the same, as each is requantized on its own.
 */
#include <executorch/backends/cortex_m/ops/cortex_m_ops_common.h>

#include "arm_nnsupportfunctions.h"     // REVERSE_TCOL_EFFICIENT_THRESHOLD

#include <algorithm>
#include <cstring>

namespace cortex_m {
namespace native {

namespace {

// CMSIS-NN's choice between its two paths (arm_transpose_conv_wrapper_s8).
bool column_path(const cmsis_nn_transpose_conv_params& params, const cmsis_nn_dims& input) {
  return !(params.stride.w <= 2 && params.stride.h <= 2 &&
           input.c > REVERSE_TCOL_EFFICIENT_THRESHOLD);
}

} // namespace

Tensor& quantized_transpose_conv2d_out(
    KernelRuntimeContext& context,
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& bias,
    const Int64ArrayRef stride,
    const Int64ArrayRef padding,
    const Int64ArrayRef output_padding,
    const Int64ArrayRef dilation,
    const int64_t input_offset,
    const int64_t output_offset,
    const Tensor& requantize_multipliers,
    const Tensor& requantize_shifts,
    const int64_t activation_min,
    const int64_t activation_max,
    const Tensor& scratch,
    const Tensor& output_scratch,
    Tensor& out) {
  const char* wrong = nullptr;
  if (input.dim() != 4 || weight.dim() != 4 || out.dim() != 4) {
    wrong = "input, weight and output must be 4-D";
  } else if ((input.size(1) > 1 && !is_channels_last_tensor(input)) ||
             (out.size(1) > 1 && !is_channels_last_tensor(out))) {
    wrong = "input and output must be channels-last (dim order 0, 2, 3, 1)";
  } else if (input.scalar_type() != ScalarType::Char ||
             weight.scalar_type() != ScalarType::Char ||
             out.scalar_type() != ScalarType::Char ||
             (bias.has_value() && bias.value().scalar_type() != ScalarType::Int)) {
    wrong = "int8 input, weight and output, int32 bias expected";
  } else if (stride.size() != 2 || padding.size() != 2 || output_padding.size() != 2 ||
             dilation.size() != 2 || dilation[0] != 1 || dilation[1] != 1) {
    wrong = "two-value stride, padding and output padding, no dilation expected";
  } else if (weight.size(0) != out.size(1) || requantize_multipliers.numel() != out.size(1) ||
             requantize_shifts.numel() != out.size(1)) {
    wrong = "one filter and one requantization per output channel expected";
  }
  if (wrong != nullptr) {
    ET_LOG(Error, "quantized_transpose_conv2d_out: %s", wrong);
    context.fail(Error::InvalidArgument);
    return out;
  }
  const cmsis_nn_dims input_dims = {
      static_cast<int32_t>(input.size(0)), static_cast<int32_t>(input.size(2)),
      static_cast<int32_t>(input.size(3)), static_cast<int32_t>(input.size(1))};
  const cmsis_nn_dims filter_dims = {
      static_cast<int32_t>(weight.size(0)), static_cast<int32_t>(weight.size(1)),
      static_cast<int32_t>(weight.size(2)), static_cast<int32_t>(weight.size(3))};
  const cmsis_nn_dims output_dims = {
      static_cast<int32_t>(out.size(0)), static_cast<int32_t>(out.size(2)),
      static_cast<int32_t>(out.size(3)), static_cast<int32_t>(out.size(1))};
  const cmsis_nn_dims bias_dims = {1, 1, 1, output_dims.c};

  cmsis_nn_transpose_conv_params params;
  params.input_offset = static_cast<int32_t>(input_offset);
  params.output_offset = static_cast<int32_t>(output_offset);
  params.stride.h = static_cast<int32_t>(stride[0]);
  params.stride.w = static_cast<int32_t>(stride[1]);
  params.padding.h = static_cast<int32_t>(padding[0]);
  params.padding.w = static_cast<int32_t>(padding[1]);
  params.padding_offsets.h = static_cast<int32_t>(output_padding[0]);
  params.padding_offsets.w = static_cast<int32_t>(output_padding[1]);
  params.dilation.h = 1;
  params.dilation.w = 1;
  params.activation.min = static_cast<int32_t>(activation_min);
  params.activation.max = static_cast<int32_t>(activation_max);
  cmsis_nn_per_channel_quant_params quant_params;
  quant_params.multiplier =
      const_cast<int32_t*>(requantize_multipliers.const_data_ptr<int32_t>());
  quant_params.shift = const_cast<int32_t*>(requantize_shifts.const_data_ptr<int32_t>());

  cmsis_nn_context ctx;
  ctx.buf = scratch.nbytes() > 0 ? scratch.mutable_data_ptr<int8_t>() : nullptr;
  ctx.size = static_cast<int32_t>(scratch.nbytes());
  cmsis_nn_context reverse_ctx;
  reverse_ctx.buf =
      output_scratch.nbytes() > 0 ? output_scratch.mutable_data_ptr<int8_t>() : nullptr;
  reverse_ctx.size = static_cast<int32_t>(output_scratch.nbytes());
  const int32_t* bias_data =
      bias.has_value() ? bias.value().const_data_ptr<int32_t>() : nullptr;
  const int8_t* input_data = input.const_data_ptr<int8_t>();
  const int8_t* filter_data = weight.const_data_ptr<int8_t>();
  int8_t* output_data = out.mutable_data_ptr<int8_t>();

  arm_cmsis_nn_status status;
  if (column_path(params, input_dims) && (params.padding.h != 0 || params.padding.w != 0)) {
    // The whole output without padding, as the column path's rolling buffer makes it.
    const int32_t full_h =
        (input_dims.h - 1) * params.stride.h + std::max(filter_dims.h, params.stride.h);
    const int32_t full_w =
        (input_dims.w - 1) * params.stride.w + std::max(filter_dims.w, params.stride.w);
    if (params.padding.h + output_dims.h > full_h || params.padding.w + output_dims.w > full_w) {
      ET_LOG(Error, "quantized_transpose_conv2d_out: the output is larger than the padded "
                    "transposed convolution makes (output padding?)");
      context.fail(Error::InvalidArgument);
      return out;
    }
    const size_t full_bytes = static_cast<size_t>(input_dims.n) * full_h * full_w * output_dims.c;
    auto full = context.allocate_temp(full_bytes, 4);
    if (!full.ok()) {
      ET_LOG(Error, "quantized_transpose_conv2d_out: the temp pool cannot give the %d bytes "
                    "of the uncropped output", static_cast<int>(full_bytes));
      context.fail(Error::MemoryAllocationFailed);
      return out;
    }
    cmsis_nn_transpose_conv_params unpadded = params;
    unpadded.padding.h = 0;
    unpadded.padding.w = 0;
    unpadded.padding_offsets.h = 0;
    unpadded.padding_offsets.w = 0;
    const cmsis_nn_dims full_dims = {input_dims.n, full_h, full_w, output_dims.c};
    int8_t* full_data = static_cast<int8_t*>(full.get());
    status = arm_transpose_conv_s8(&ctx, &reverse_ctx, &unpadded, &quant_params, &input_dims,
                                   input_data, &filter_dims, filter_data, &bias_dims,
                                   bias_data, &full_dims, full_data);
    const size_t pixel = static_cast<size_t>(output_dims.c);
    for (int32_t n = 0; n < output_dims.n; n++) {
      for (int32_t y = 0; y < output_dims.h; y++) {
        const int8_t* from = full_data +
            ((static_cast<size_t>(n) * full_h + y + params.padding.h) * full_w +
             params.padding.w) * pixel;
        int8_t* to = output_data +
            (static_cast<size_t>(n) * output_dims.h + y) * output_dims.w * pixel;
        std::memcpy(to, from, output_dims.w * pixel);
      }
    }
  } else {
    status = arm_transpose_conv_wrapper_s8(&ctx, &reverse_ctx, &params, &quant_params,
                                           &input_dims, input_data, &filter_dims, filter_data,
                                           &bias_dims, bias_data, &output_dims, output_data);
  }
  if (status != ARM_CMSIS_NN_SUCCESS) {
    ET_LOG(Error, "quantized_transpose_conv2d_out: CMSIS-NN failed (%d)",
           static_cast<int>(status));
    context.fail(Error::Internal);
  }
  return out;
}

} // namespace native
} // namespace cortex_m
