/*
 * aten::add.out for the CORE-V core, kept small (add.pte must fit 48 KiB of text):
 * float32 tensors of one shape and one dim order, alpha == 1: one add per element
 * in a plain loop. Broadcasting, alpha != 1, other dtypes: the portable kernel.
 */
#include "corev_util.h"
#include "portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::Scalar;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

Tensor& add_out(KernelRuntimeContext& ctx, const Tensor& a, const Tensor& b,
                const Scalar& alpha, Tensor& out) {
  if (!(util::is_float(a) && util::is_float(b) && util::is_float(out) &&
        util::scalar_is_one(alpha) && util::same_sizes(a, b) &&
        executorch::runtime::tensors_have_same_dim_order(a, b, out) &&
        executorch::runtime::resize_tensor(out, a.sizes()) ==
            executorch::runtime::Error::Ok)) {
    COREV_FALLBACK(ctx, out,
                   torch::executor::native::add_out(ctx, a, b, alpha, out));
  }
  const float* x = a.const_data_ptr<float>();
  const float* y = b.const_data_ptr<float>();
  float* z = out.mutable_data_ptr<float>();
  for (ssize_t i = 0, n = a.numel(); i < n; ++i) {
    z[i] = x[i] + y[i];
  }
  return out;
}

}  // namespace native
}  // namespace corev
