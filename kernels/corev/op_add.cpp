/*
 * aten::add.out for the CORE-V core, kept small (add.pte must fit 48 KiB of text,
 * with the portable kernel linked beside it as the fallback): float32 tensors of
 * one shape and one dim order, out already of that shape (no resize), an integer
 * alpha of 1 (what torch.export gives `x + y`): one add per element in a plain
 * loop. Broadcasting, a resize, any other alpha, other dtypes: the portable kernel.
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
  if (util::is_float(a) && util::is_float(b) && util::is_float(out) &&
      alpha.isIntegral(/*includeBool=*/false) && alpha.to<int64_t>() == 1 &&
      util::same_layout(a, b, out)) {
    const float* x = a.const_data_ptr<float>();
    const float* y = b.const_data_ptr<float>();
    float* z = out.mutable_data_ptr<float>();
    for (ssize_t i = 0, n = a.numel(); i < n; ++i) {
      z[i] = x[i] + y[i];
    }
    return out;
  }
  COREV_FALLBACK(ctx, out, torch::executor::native::add_out(ctx, a, b, alpha, out));
}

}  // namespace native
}  // namespace corev
