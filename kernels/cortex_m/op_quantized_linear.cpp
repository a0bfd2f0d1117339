/*
 * cortex_m::quantized_linear.out for CMSIS-NN's C paths, in every form ExecuTorch's
 * Cortex-M passes export it. Stands in for ExecuTorch's
 * backends/cortex_m/ops/op_quantized_linear.cpp (v1.4.1) in every build of this
 * repository (kernels/cortex_m/README.md).
 *
 * Why: for an MVE target (Cortex-M55 and M85, CortexMPassManager's default) the passes
 * give the operator a precomputed kernel sum, input_offset * sum_j(w_ij + filter_offset)
 * + bias_i, and no bias. ExecuTorch's kernel hands it to arm_fully_connected_s8 in
 * ctx.buf, which only CMSIS-NN's MVE code reads: the C path reads the bias (none) and
 * adds the input offset itself, so every output lacks its bias and the offset's term.
 *
 * Here the kernel sum goes in as the bias and the input offset as 0:
 *   sum_j x_j (w_ij + b) + kernel_sum_i = sum_j (x_j + a)(w_ij + b) + bias_i,
 * the same int32 as the bias form (and as the dialect's Python reference), before the
 * same requantization. With the CORE-V kernels, an input offset of 0 also spares the
 * per-row weight sums (kernels/corev/cmsis_nn/arm_nn_vec_mat_mult_t_s8.c).
 */
#include <executorch/backends/cortex_m/ops/cortex_m_ops_common.h>

namespace cortex_m {
namespace native {

Tensor& quantized_linear_out(
    KernelRuntimeContext& context,
    const Tensor& input,
    const Tensor& weights,
    const std::optional<Tensor>& bias,
    const std::optional<Tensor>& kernel_sum,
    const int64_t input_offset,
    const int64_t filter_offset,
    const int64_t output_offset,
    const Int64ArrayRef requantize_multipliers,
    const Int64ArrayRef requantize_shifts,
    const int64_t activation_max,
    const int64_t activation_min,
    Tensor& out) {
  const int32_t in_features = static_cast<int32_t>(input.size(input.dim() - 1));
  const int32_t out_features = static_cast<int32_t>(out.size(out.dim() - 1));
  if (input.scalar_type() != ScalarType::Char ||
      weights.scalar_type() != ScalarType::Char ||
      out.scalar_type() != ScalarType::Char ||
      requantize_multipliers.size() < 1 || requantize_shifts.size() < 1) {
    ET_LOG(Error, "quantized_linear_out: int8 input, weights and output, one "
                  "requantization (multiplier, shift) expected");
    context.fail(Error::InvalidArgument);
    return out;
  }
  const Tensor* start = kernel_sum.has_value() ? &kernel_sum.value()
      : bias.has_value() ? &bias.value() : nullptr;
  if (start != nullptr && (start->scalar_type() != ScalarType::Int ||
                           start->numel() != out_features)) {
    ET_LOG(Error, "quantized_linear_out: %s must be int32, one per output feature (%d)",
           kernel_sum.has_value() ? "kernel_sum" : "bias",
           static_cast<int>(out_features));
    context.fail(Error::InvalidArgument);
    return out;
  }
  int32_t batches = 1;
  for (ssize_t i = 0; i + 1 < input.dim(); i++) {
    batches *= static_cast<int32_t>(input.size(i));
  }

  // No buffer: the C path takes none.
  cmsis_nn_context ctx;
  ctx.buf = nullptr;
  ctx.size = 0;
  cmsis_nn_fc_params fc_params;
  fc_params.input_offset =
      kernel_sum.has_value() ? 0 : static_cast<int32_t>(input_offset);
  fc_params.filter_offset = static_cast<int32_t>(filter_offset);
  fc_params.output_offset = static_cast<int32_t>(output_offset);
  fc_params.activation.min = static_cast<int32_t>(activation_min);
  fc_params.activation.max = static_cast<int32_t>(activation_max);
  cmsis_nn_per_tensor_quant_params quant_params;
  quant_params.multiplier = static_cast<int32_t>(requantize_multipliers[0]);
  quant_params.shift = static_cast<int32_t>(requantize_shifts[0]);

  const cmsis_nn_dims input_dims = {batches, 1, 1, in_features};
  const cmsis_nn_dims filter_dims = {in_features, 1, 1, out_features};
  const cmsis_nn_dims bias_dims = {1, 1, 1, out_features};
  const cmsis_nn_dims output_dims = {batches, 1, 1, out_features};
  const arm_cmsis_nn_status status = arm_fully_connected_s8(
      &ctx,
      &fc_params,
      &quant_params,
      &input_dims,
      input.const_data_ptr<int8_t>(),
      &filter_dims,
      weights.const_data_ptr<int8_t>(),
      &bias_dims,
      start != nullptr ? start->const_data_ptr<int32_t>() : nullptr,
      &output_dims,
      out.mutable_data_ptr<int8_t>());
  if (status != ARM_CMSIS_NN_SUCCESS) {
    ET_LOG(Error, "quantized_linear_out: arm_fully_connected_s8 failed (%d)",
           static_cast<int>(status));
    context.fail(Error::Internal);
  }
  return out;
}

} // namespace native
} // namespace cortex_m
