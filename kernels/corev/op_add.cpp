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
using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

Tensor& add_out(KernelRuntimeContext& ctx, const Tensor& a, const Tensor& b,
                const Scalar& alpha, Tensor& out) {
  // Through the TensorImpls: the Tensor accessors stay as LTO had them (smaller).
  const auto* ia = a.unsafeGetTensorImpl();
  const auto* ib = b.unsafeGetTensorImpl();
  auto* io = out.unsafeGetTensorImpl();
  if (ia->scalar_type() == ScalarType::Float &&
      ib->scalar_type() == ScalarType::Float &&
      io->scalar_type() == ScalarType::Float &&
      alpha.isIntegral(/*includeBool=*/false) && alpha.to<int64_t>() == 1 &&
      util::same_layout(a, b, out)) {
    const float* x = static_cast<const float*>(ia->data());
    const float* y = static_cast<const float*>(ib->data());
    float* z = static_cast<float*>(io->mutable_data());
    for (ssize_t i = 0, n = ia->numel(); i < n; ++i) {
      z[i] = x[i] + y[i];
    }
    return out;
  }
  COREV_FALLBACK(ctx, out, torch::executor::native::add_out(ctx, a, b, alpha, out));
}

}  // namespace native
}  // namespace corev
