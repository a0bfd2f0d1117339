/*
 * aten::mul.out for the CORE-V core: float32 tensors with one dim order, of one
 * shape, or one of them a single element, or one of them contiguous and equal to
 * the other's trailing dimensions (x[N, C] * y[C]): plain loops, unrolled by 4.
 * Other broadcasting, other dtypes: the portable kernel.
 */
#include "corev_util.h"
#include "portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

namespace {

/// How b's elements repeat over a's: b has `period` elements, repeated; 0 = no.
size_t broadcast_period(const Tensor& a, const Tensor& b) {
  if (b.numel() == 1) {
    return 1;
  }
  if (b.dim() > a.dim()) {
    return 0;
  }
  // b's sizes (leading 1s dropped) must equal a's trailing sizes.
  ssize_t lead = 0;
  while (lead < b.dim() && b.size(lead) == 1) {
    ++lead;
  }
  const ssize_t off = a.dim() - b.dim();
  for (ssize_t i = lead; i < b.dim(); ++i) {
    if (b.size(i) != a.size(off + i)) {
      return 0;
    }
  }
  return b.numel();
}

COREV_HOT void mul_same(const float* x, const float* y, float* z, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    z[i] = x[i] * y[i];
    z[i + 1] = x[i + 1] * y[i + 1];
    z[i + 2] = x[i + 2] * y[i + 2];
    z[i + 3] = x[i + 3] * y[i + 3];
  }
  for (; i < n; ++i) {
    z[i] = x[i] * y[i];
  }
}

/// z[i] = x[i] * y[i % period] (y on the right: the product is commutative).
COREV_HOT void mul_period(const float* x, const float* y, float* z, size_t n,
                          size_t period) {
  if (period == 1) {
    const float s = y[0];
    for (size_t i = 0; i < n; ++i) {
      z[i] = x[i] * s;
    }
    return;
  }
  for (size_t i = 0; i < n; i += period) {
    mul_same(x + i, y, z + i, period);
  }
}

}  // namespace

Tensor& mul_out(KernelRuntimeContext& ctx, const Tensor& a, const Tensor& b,
                Tensor& out) {
  bool fast = util::is_float(a) && util::is_float(b) && util::is_float(out);
  const Tensor* big = &a;
  const Tensor* small = &b;
  size_t period = 0;
  if (fast) {
    if (util::same_sizes(a, b)) {
      fast = executorch::runtime::tensors_have_same_dim_order(a, b, out);
    } else {
      if (b.numel() > a.numel() || (b.numel() == a.numel() && b.dim() > a.dim())) {
        big = &b;
        small = &a;
      }
      period = broadcast_period(*big, *small);
      // A broadcast operand is read in its memory order: both contiguous.
      fast = period != 0 && util::contiguous(*big) && util::contiguous(*small) &&
             util::contiguous(out);
    }
  }
  if (!fast || executorch::runtime::resize_tensor(out, big->sizes()) !=
                   executorch::runtime::Error::Ok) {
    COREV_FALLBACK(ctx, out, torch::executor::native::mul_out(ctx, a, b, out));
  }
  const size_t n = out.numel();
  if (period == 0) {
    mul_same(a.const_data_ptr<float>(), b.const_data_ptr<float>(),
             out.mutable_data_ptr<float>(), n);
  } else {
    mul_period(big->const_data_ptr<float>(), small->const_data_ptr<float>(),
               out.mutable_data_ptr<float>(), n, period);
  }
  return out;
}

}  // namespace native
}  // namespace corev
