/*
 * The portable (and quantized) ExecuTorch kernels the CORE-V kernels fall back to
 * for the cases they do not cover. The build compiles each chosen operator's
 * portable source beside ours, with the same dtype selection, without registering
 * it; these declarations match the definitions in
 * kernels/portable/cpu/op_<name>.cpp and kernels/quantized/cpu/op_(de)quantize.cpp.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include <executorch/runtime/kernel/kernel_includes.h>

namespace torch {
namespace executor {
namespace native {

executorch::aten::Tensor& addmm_out(torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& in, const executorch::aten::Tensor& mat1,
                  const executorch::aten::Tensor& mat2, const executorch::aten::Scalar& beta, const executorch::aten::Scalar& alpha,
                  executorch::aten::Tensor& out);

executorch::aten::Tensor& permute_copy_out(torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& in,
                         executorch::aten::ArrayRef<int64_t> dims, executorch::aten::Tensor& out);

executorch::aten::Tensor& convolution_out(torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& in,
                        const executorch::aten::Tensor& weight, const std::optional<executorch::aten::Tensor>& bias,
                        executorch::aten::ArrayRef<int64_t> stride, executorch::aten::ArrayRef<int64_t> padding,
                        executorch::aten::ArrayRef<int64_t> dilation, bool transposed,
                        executorch::aten::ArrayRef<int64_t> output_padding, int64_t groups,
                        executorch::aten::Tensor& out);

std::tuple<executorch::aten::Tensor&, executorch::aten::Tensor&> max_pool2d_with_indices_out(
    torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& in, executorch::aten::ArrayRef<int64_t> kernel_size,
    executorch::aten::ArrayRef<int64_t> stride, executorch::aten::ArrayRef<int64_t> padding,
    executorch::aten::ArrayRef<int64_t> dilation, bool ceil_mode, executorch::aten::Tensor& out, executorch::aten::Tensor& indices);

executorch::aten::Tensor& relu_out(torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& in, executorch::aten::Tensor& out);

executorch::aten::Tensor& softmax_out(torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& in, int64_t dim,
                    bool half_to_float, executorch::aten::Tensor& out);

executorch::aten::Tensor& add_out(torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& a, const executorch::aten::Tensor& b,
                const executorch::aten::Scalar& alpha, executorch::aten::Tensor& out);

executorch::aten::Tensor& mul_out(torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& a, const executorch::aten::Tensor& b,
                executorch::aten::Tensor& out);

// kernels/quantized/cpu
executorch::aten::Tensor& quantize_per_tensor_out(torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& input,
                                double scale, int64_t zero_point,
                                int64_t quant_min, int64_t quant_max,
                                executorch::aten::ScalarType dtype, executorch::aten::Tensor& out);

executorch::aten::Tensor& dequantize_per_tensor_out(torch::executor::KernelRuntimeContext& ctx, const executorch::aten::Tensor& input,
                                  double scale, int64_t zero_point,
                                  int64_t quant_min, int64_t quant_max,
                                  executorch::aten::ScalarType dtype,
                                  std::optional<executorch::aten::ScalarType> out_dtype,
                                  executorch::aten::Tensor& out);

}  // namespace native
}  // namespace executor
}  // namespace torch
