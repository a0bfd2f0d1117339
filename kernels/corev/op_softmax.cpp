/*
 * aten::_softmax.out for the CORE-V core: float32, contiguous, any dim. Each row
 * (the elements along `dim`, stride `inner`) takes the max, then exp(x - max) once
 * per element into out, its sum in float in order, then one division per element:
 * the portable kernel's arithmetic (same expf, same order), but one exp per element
 * instead of two. Other cases: the portable kernel.
 */
#include <algorithm>
#include <cmath>

#include "corev_util.h"
#include "portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

Tensor& softmax_out(KernelRuntimeContext& ctx, const Tensor& in, int64_t dim,
                    bool half_to_float, Tensor& out) {
  const int64_t nd = in.dim() == 0 ? 1 : in.dim();
  if (dim < 0) {
    dim += nd;
  }
  if (!(util::is_float(in) && util::is_float(out) && !half_to_float && dim >= 0 &&
        dim < nd && util::contiguous(in) && util::contiguous(out))) {
    COREV_FALLBACK(ctx, out,
                   torch::executor::native::softmax_out(ctx, in, dim, half_to_float,
                                                        out));
  }
  ET_KERNEL_CHECK(ctx,
                  executorch::runtime::resize_tensor(out, in.sizes()) ==
                      executorch::runtime::Error::Ok,
                  InvalidArgument, out);
  if (in.numel() == 0) {
    return out;
  }
  size_t size = in.dim() == 0 ? 1 : in.size(dim);
  size_t inner = 1;
  for (int64_t d = dim + 1; d < in.dim(); ++d) {
    inner *= in.size(d);
  }
  const size_t outer = in.numel() / (size * inner);
  const float* x = in.const_data_ptr<float>();
  float* y = out.mutable_data_ptr<float>();
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inner; ++i) {
      const float* xr = x + o * size * inner + i;
      float* yr = y + o * size * inner + i;
      float max = xr[0];
      for (size_t k = 1; k < size; ++k) {
        max = std::max(xr[k * inner], max);
      }
      float sum = 0.0f;
      for (size_t k = 0; k < size; ++k) {
        float e = std::exp(xr[k * inner] - max);
        yr[k * inner] = e;
        sum += e;
      }
      for (size_t k = 0; k < size; ++k) {
        yr[k * inner] = yr[k * inner] / sum;
      }
    }
  }
  return out;
}

}  // namespace native
}  // namespace corev
