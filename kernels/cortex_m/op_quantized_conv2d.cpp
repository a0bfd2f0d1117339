/*
 * cortex_m::quantized_conv2d.out for CMSIS-NN's C paths, with the scratch buffer of any
 * target ExecuTorch's Cortex-M passes export for. Stands in for ExecuTorch's
 * backends/cortex_m/ops/op_quantized_conv2d.cpp (v1.4.1) in every build of this
 * repository (kernels/cortex_m/README.md).
 *
 * Why: the passes plan the operator's scratch tensor as large as the exporting target's
 * CMSIS-NN backend asks for (arm_convolve_wrapper_s8_get_buffer_size of the SCALAR, DSP
 * or MVE code). The C path that runs here may need more: for a 1xN convolution the MVE
 * code plans an int8 row of the kernel's width where the C path's im2col takes two int16
 * columns of the whole reduction (16 bytes against 48 for a 1x3 kernel over 4
 * channels), and ExecuTorch's kernel hands CMSIS-NN the smaller buffer, which the C path
 * then overruns into the tensors planned after it.
 *
 * Here the kernel asks CMSIS-NN (the C path's own arm_convolve_wrapper_s8_get_buffer_size)
 * what it needs; a scratch tensor that holds less is replaced by a buffer from the
 * runner's temp allocator, which the build sizes for the model
 * (etcorev.executorch.cortex_m_forms.temp_pool_bytes). A scratch size no CMSIS-NN
 * backend plans is refused by the build before this runs.
 *
 * And a grouped convolution without bias (groups of channels, or a depthwise kernel over
 * a batch, which the passes make a quantized_conv2d) gets a bias of zeros from the same
 * pool: CMSIS-NN's C path (arm_convolve_s8) steps the bias pointer from group to group
 * whether it is NULL or not, and reads the second group's bias at address 4 * (output
 * channels per group). On QEMU that is a load fault; where address 0 is memory (the
 * CV32E40P testbench) it was a wrong answer with exit status 0.
 */
#include <executorch/backends/cortex_m/ops/cortex_m_ops_common.h>

#include <cstring>

namespace cortex_m {
namespace native {

namespace {

bool conv2d_arguments_valid(
    KernelRuntimeContext& context,
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& bias,
    const Tensor& out,
    const Int64ArrayRef& stride,
    const Int64ArrayRef& padding,
    const Int64ArrayRef& dilation,
    const Tensor& requantize_multipliers,
    const Tensor& requantize_shifts) {
  const char* wrong = nullptr;
  if (input.dim() != 4 || weight.dim() != 4 || out.dim() != 4) {
    wrong = "input, weight and output must be 4-D";
  } else if ((input.size(1) > 1 && !is_channels_last_tensor(input)) ||
             (out.size(1) > 1 && !is_channels_last_tensor(out))) {
    wrong = "input and output must be channels-last (dim order 0, 2, 3, 1)";
  } else if (input.scalar_type() != ScalarType::Char ||
             weight.scalar_type() != ScalarType::Char ||
             out.scalar_type() != ScalarType::Char) {
    wrong = "input, weight and output must be int8";
  } else if (bias.has_value() && bias.value().scalar_type() != ScalarType::Int) {
    wrong = "bias must be int32";
  } else if (stride.size() != 2 || padding.size() != 2 || dilation.size() != 2) {
    wrong = "stride, padding and dilation must have two values";
  } else if (requantize_multipliers.numel() != out.size(1) ||
             requantize_shifts.numel() != out.size(1)) {
    wrong = "one requantization (multiplier, shift) per output channel expected";
  }
  if (wrong != nullptr) {
    ET_LOG(Error, "quantized_conv2d_out: %s", wrong);
    context.fail(Error::InvalidArgument);
    return false;
  }
  return true;
}

} // namespace

Tensor& quantized_conv2d_out(
    KernelRuntimeContext& context,
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& bias,
    const Int64ArrayRef stride,
    const Int64ArrayRef padding,
    const Int64ArrayRef dilation,
    const int64_t input_offset,
    const int64_t output_offset,
    const Tensor& requantize_multipliers,
    const Tensor& requantize_shifts,
    const int64_t activation_min,
    const int64_t activation_max,
    const Tensor& scratch,
    Tensor& out) {
  if (!conv2d_arguments_valid(context, input, weight, bias, out, stride, padding,
                              dilation, requantize_multipliers, requantize_shifts)) {
    return out;
  }
  // Activations NCHW in logical sizes (channels-last in memory), weights OHWI.
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

  cmsis_nn_conv_params conv_params;
  conv_params.input_offset = static_cast<int32_t>(input_offset);
  conv_params.output_offset = static_cast<int32_t>(output_offset);
  conv_params.stride.h = static_cast<int32_t>(stride[0]);
  conv_params.stride.w = static_cast<int32_t>(stride[1]);
  conv_params.padding.h = static_cast<int32_t>(padding[0]);
  conv_params.padding.w = static_cast<int32_t>(padding[1]);
  conv_params.dilation.h = static_cast<int32_t>(dilation[0]);
  conv_params.dilation.w = static_cast<int32_t>(dilation[1]);
  conv_params.activation.min = static_cast<int32_t>(activation_min);
  conv_params.activation.max = static_cast<int32_t>(activation_max);
  cmsis_nn_per_channel_quant_params quant_params;
  quant_params.multiplier =
      const_cast<int32_t*>(requantize_multipliers.const_data_ptr<int32_t>());
  quant_params.shift = const_cast<int32_t*>(requantize_shifts.const_data_ptr<int32_t>());

  // The buffer the C path needs; a scratch tensor planned for another backend may hold
  // less.
  const int32_t needed = arm_convolve_wrapper_s8_get_buffer_size(
      &conv_params, &input_dims, &filter_dims, &output_dims);
  cmsis_nn_context ctx;
  ctx.buf = scratch.nbytes() > 0 ? scratch.mutable_data_ptr<int8_t>() : nullptr;
  ctx.size = static_cast<int32_t>(scratch.nbytes());
  const bool scratch_short = needed > ctx.size;
  // Groups: CMSIS-NN takes them from the channel counts (input over filter).
  const bool zero_bias = !bias.has_value() && filter_dims.c != input_dims.c;
  const size_t zero_bias_bytes = zero_bias ? sizeof(int32_t) * output_dims.c : 0;
  const int32_t* bias_data =
      bias.has_value() ? bias.value().const_data_ptr<int32_t>() : nullptr;
  if (scratch_short || zero_bias) {
    // One allocation for both (cortex_m_forms.py sizes the pool the same way): the
    // zeros first, the scratch after them on a 16-byte boundary.
    const size_t scratch_at = (zero_bias_bytes + 15) & ~static_cast<size_t>(15);
    const size_t bytes = scratch_short ? scratch_at + static_cast<size_t>(needed)
                                       : zero_bias_bytes;
    auto buffer = context.allocate_temp(bytes, 16);
    if (!buffer.ok()) {
      ET_LOG(Error, "quantized_conv2d_out: the temp pool cannot give %d bytes (scratch "
                    "tensor %d bytes, the C path needs %d; zero bias %d bytes)",
             static_cast<int>(bytes), static_cast<int>(ctx.size), static_cast<int>(needed),
             static_cast<int>(zero_bias_bytes));
      context.fail(Error::MemoryAllocationFailed);
      return out;
    }
    uint8_t* base = static_cast<uint8_t*>(buffer.get());
    if (zero_bias) {
      memset(base, 0, zero_bias_bytes);
      bias_data = reinterpret_cast<const int32_t*>(base);
    }
    if (scratch_short) {
      ctx.buf = base + scratch_at;
      ctx.size = needed;
    }
  }

  const arm_cmsis_nn_status status = arm_convolve_wrapper_s8(
      &ctx,
      &conv_params,
      &quant_params,
      &input_dims,
      input.const_data_ptr<int8_t>(),
      &filter_dims,
      weight.const_data_ptr<int8_t>(),
      &bias_dims,
      bias_data,
      &output_dims,
      out.mutable_data_ptr<int8_t>());
  if (status != ARM_CMSIS_NN_SUCCESS) {
    ET_LOG(Error, "quantized_conv2d_out: arm_convolve_wrapper_s8 failed (%d)",
           static_cast<int>(status));
    context.fail(Error::Internal);
  }
  return out;
}

} // namespace native
} // namespace cortex_m
