/*
 * The portable (and quantized) ExecuTorch kernels the CORE-V kernels fall back to
 * for the cases they do not cover, and kernels/portable_fixes' corrections for the
 * cases they do not correct. The build compiles each chosen operator's
 * portable source beside ours, with the same dtype selection, without registering
 * it; these declarations match the definitions in
 * kernels/portable/cpu/op_<name>.cpp, kernels/quantized/cpu/op_(de)quantize.cpp and
 * backends/cortex_m/ops/op_(de)quantize_per_tensor.cpp.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>

#include <executorch/runtime/kernel/kernel_includes.h>

namespace torch {
namespace executor {
namespace native {

// Spelled out (no using-declarations here: the portable sources declare their own).
#define COREV_T executorch::aten::Tensor
#define COREV_INTS executorch::aten::ArrayRef<int64_t>
#define COREV_CTX torch::executor::KernelRuntimeContext

COREV_T& addmm_out(COREV_CTX& ctx, const COREV_T& in, const COREV_T& mat1,
                   const COREV_T& mat2, const executorch::aten::Scalar& beta,
                   const executorch::aten::Scalar& alpha, COREV_T& out);

COREV_T& permute_copy_out(COREV_CTX& ctx, const COREV_T& in, COREV_INTS dims,
                          COREV_T& out);

COREV_T& convolution_out(COREV_CTX& ctx, const COREV_T& in, const COREV_T& weight,
                         const std::optional<COREV_T>& bias, COREV_INTS stride,
                         COREV_INTS padding, COREV_INTS dilation, bool transposed,
                         COREV_INTS output_padding, int64_t groups, COREV_T& out);

std::tuple<COREV_T&, COREV_T&> max_pool2d_with_indices_out(
    COREV_CTX& ctx, const COREV_T& in, COREV_INTS kernel_size, COREV_INTS stride,
    COREV_INTS padding, COREV_INTS dilation, bool ceil_mode, COREV_T& out,
    COREV_T& indices);

COREV_T& relu_out(COREV_CTX& ctx, const COREV_T& in, COREV_T& out);

COREV_T& softmax_out(COREV_CTX& ctx, const COREV_T& in, int64_t dim,
                     bool half_to_float, COREV_T& out);

COREV_T& add_out(COREV_CTX& ctx, const COREV_T& a, const COREV_T& b,
                 const executorch::aten::Scalar& alpha, COREV_T& out);

COREV_T& mul_out(COREV_CTX& ctx, const COREV_T& a, const COREV_T& b, COREV_T& out);

// (kernels/portable_fixes)
COREV_T& remainder_Tensor_out(COREV_CTX& ctx, const COREV_T& a, const COREV_T& b,
                              COREV_T& out);

COREV_T& remainder_Scalar_out(COREV_CTX& ctx, const COREV_T& a,
                              const executorch::aten::Scalar& b, COREV_T& out);

// kernels/quantized/cpu/op_quantize.cpp and op_dequantize.cpp
COREV_T& quantize_per_tensor_out(COREV_CTX& ctx, const COREV_T& input, double scale,
                                 int64_t zero_point, int64_t quant_min,
                                 int64_t quant_max, executorch::aten::ScalarType dtype,
                                 COREV_T& out);

COREV_T& dequantize_per_tensor_out(
    COREV_CTX& ctx, const COREV_T& input, double scale, int64_t zero_point,
    int64_t quant_min, int64_t quant_max, executorch::aten::ScalarType dtype,
    std::optional<executorch::aten::ScalarType> out_dtype, COREV_T& out);

}  // namespace native
}  // namespace executor
}  // namespace torch

// backends/cortex_m/ops/op_quantize_per_tensor.cpp and op_dequantize_per_tensor.cpp
// (for kernels/corev_cortex_m)
namespace cortex_m {
namespace native {

COREV_T& quantize_per_tensor_out(COREV_CTX& ctx, const COREV_T& input, double scale,
                                 int64_t zero_point, int64_t quant_min,
                                 int64_t quant_max, executorch::aten::ScalarType dtype,
                                 COREV_T& out);

COREV_T& dequantize_per_tensor_out(COREV_CTX& ctx, const COREV_T& input, double scale,
                                   int64_t zero_point, int64_t quant_min,
                                   int64_t quant_max,
                                   executorch::aten::ScalarType dtype, COREV_T& out);

}  // namespace native
}  // namespace cortex_m

#undef COREV_T
#undef COREV_INTS
#undef COREV_CTX
