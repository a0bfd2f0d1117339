/*
 * aten::addmm.out for the CORE-V core: out = beta * in + alpha * (mat1 @ mat2).
 *
 * Fast path: float32, contiguous, alpha == beta == 1, `in` of out's shape or
 * broadcast along rows ([p], [1, p]) or a single element. Each output is one dot
 * product with the bias in it (util::dot): on rv32imc an integer accumulation of
 * the exact products, rounded once; with an FPU fused multiply-adds.
 * Everything else: the portable kernel.
 */
#include "corev_util.h"
#include "portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::Scalar;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

namespace {

COREV_HOT void gemm(const float* a, const float* b, const float* bias, float* o,
                    size_t m, size_t n, size_t p, ptrdiff_t bias_row_stride,
                    ptrdiff_t bias_col_stride) {
  for (size_t i = 0; i < m; ++i) {
    const float* row = a + i * n;
    const float* bias_row = bias + i * bias_row_stride;
    for (size_t j = 0; j < p; ++j) {
      o[i * p + j] = util::dot(row, 1, b + j, (ptrdiff_t)p, n,
                               bias_row + j * bias_col_stride);
    }
  }
}

}  // namespace

Tensor& addmm_out(KernelRuntimeContext& ctx, const Tensor& in, const Tensor& mat1,
                  const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
                  Tensor& out) {
  bool fast = util::is_float(in) && util::is_float(mat1) && util::is_float(mat2) &&
              util::is_float(out) && mat1.dim() == 2 && mat2.dim() == 2 &&
              mat1.size(1) == mat2.size(0) && util::contiguous(in) &&
              util::contiguous(mat1) && util::contiguous(mat2) &&
              util::contiguous(out) && util::scalar_is_one(alpha) &&
              util::scalar_is_one(beta);
  const size_t m = fast ? mat1.size(0) : 0;
  const size_t n = fast ? mat1.size(1) : 0;
  const size_t p = fast ? mat2.size(1) : 0;
  // How the bias is indexed: per element of out, per column, or one value.
  ptrdiff_t bias_row_stride = 0, bias_col_stride = 0;
  if (fast) {
    if (in.dim() == 2 && (size_t)in.size(0) == m && (size_t)in.size(1) == p) {
      bias_row_stride = p;
      bias_col_stride = 1;
    } else if ((in.dim() == 1 || (in.dim() == 2 && in.size(0) == 1)) &&
               (size_t)in.size(in.dim() - 1) == p && p != 1) {
      bias_col_stride = 1;
    } else if (in.numel() != 1) {
      fast = false;
    }
  }
  if (!fast) {
    COREV_FALLBACK(ctx, out,
                   torch::executor::native::addmm_out(ctx, in, mat1, mat2, beta,
                                                      alpha, out));
  }
  executorch::aten::SizesType sizes[2] = {
      static_cast<executorch::aten::SizesType>(m),
      static_cast<executorch::aten::SizesType>(p)};
  ET_KERNEL_CHECK(ctx,
                  executorch::runtime::resize_tensor(out, {sizes, 2}) ==
                      executorch::runtime::Error::Ok,
                  InvalidArgument, out);

  gemm(mat1.const_data_ptr<float>(), mat2.const_data_ptr<float>(),
       in.const_data_ptr<float>(), out.mutable_data_ptr<float>(), m, n, p,
       bias_row_stride, bias_col_stride);
  return out;
}

}  // namespace native
}  // namespace corev
