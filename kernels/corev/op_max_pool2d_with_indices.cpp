/*
 * aten::max_pool2d_with_indices.out for the CORE-V core: float32 values, int64
 * indices, contiguous 3-D (C, H, W) or 4-D (N, C, H, W) tensors, any kernel size,
 * stride, padding, dilation and ceil_mode (the output size comes from the portable
 * helper). Windows are scanned row by row, the first in-bounds element starts the
 * maximum and only a strictly greater one replaces it, as in the portable kernel.
 * Without an FPU the comparisons are integer comparisons of order-preserving keys
 * (-0 and +0 equal); a NaN in a window makes that window use float comparisons.
 * Other cases: the portable kernel.
 */
#include <executorch/kernels/portable/cpu/util/kernel_ops_util.h>

#include "corev_util.h"
#include "portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::ArrayRef;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

namespace {

#if COREV_SOFT_FLOAT
// Signed integer with the order of the float; -0 and +0 map to 0.
COREV_INLINE int32_t key(uint32_t u) {
  return (int32_t)u < 0 ? -(int32_t)(u & 0x7fffffff) : (int32_t)u;
}
#endif

struct Geometry {
  int32_t in_h, in_w, out_h, out_w, k_h, k_w, s_h, s_w, p_h, p_w, d_h, d_w;
};

/// Outputs [0, n) of a row whose windows lie inside the input, without dilation:
/// `first` is the input index of the first window's top-left element, windows are
/// `step` elements apart. False if a window holds a NaN (soft float: the caller then
/// takes the generic path, which compares as floats).
COREV_HOT bool pool_row(const float* in, int32_t first, int32_t step, int32_t k_h,
                        int32_t k_w, int32_t in_w, float* out, int64_t* idx,
                        int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    const int32_t base = first + i * step;
    const float* w = in + base;
    int32_t best_i = 0;
#if COREV_SOFT_FLOAT
    uint32_t any_nan = 0;
    int32_t best_k = key(util::bits(w[0]));
#else
    float best = w[0];
#endif
    for (int32_t r = 0; r < k_h; ++r, w += in_w) {
      for (int32_t c = 0; c < k_w; ++c) {
#if COREV_SOFT_FLOAT
        const uint32_t u = util::bits(w[c]);
        any_nan |= (u & 0x7fffffff) > 0x7f800000;
        const int32_t k = key(u);
        if (k > best_k) {
          best_k = k;
          best_i = r * in_w + c;
        }
#else
        if (w[c] > best) {
          best = w[c];
          best_i = r * in_w + c;
        }
#endif
      }
    }
#if COREV_SOFT_FLOAT
    if (any_nan) {
      return false;
    }
#endif
    out[i] = in[base + best_i];
    idx[i] = base + best_i;
  }
  return true;
}

COREV_HOT void pool_plane(const float* in, float* out, int64_t* idx,
                          const Geometry& g) {
  // Outputs [ox_lo, ox_hi) have windows inside the input horizontally (no dilation).
  int32_t ox_lo = 0, ox_hi = 0;
  const bool plain = g.d_h == 1 && g.d_w == 1 && g.in_w - g.k_w + g.p_w >= 0;
  if (plain) {
    ox_lo = (g.p_w + g.s_w - 1) / g.s_w;
    ox_hi = (g.in_w - g.k_w + g.p_w) / g.s_w + 1;
    ox_hi = ox_hi < g.out_w ? ox_hi : g.out_w;
    ox_lo = ox_lo < ox_hi ? ox_lo : ox_hi;
  }
  for (int32_t oy = 0; oy < g.out_h; ++oy, out += g.out_w, idx += g.out_w) {
    const int32_t y0 = oy * g.s_h - g.p_h;
    int32_t ky0, ky1;
    util::tap_range(y0, g.k_h, g.d_h, g.in_h, &ky0, &ky1);
    int32_t fast_lo = 0, fast_hi = 0;
    if (plain && ky0 == 0 && ky1 == g.k_h && ox_hi > ox_lo &&
        pool_row(in, y0 * g.in_w + ox_lo * g.s_w - g.p_w, g.s_w, g.k_h, g.k_w,
                 g.in_w, out + ox_lo, idx + ox_lo, ox_hi - ox_lo)) {
      fast_lo = ox_lo;
      fast_hi = ox_hi;
    }
    for (int32_t ox = 0; ox < g.out_w; ++ox) {
      if (ox == fast_lo && fast_hi > fast_lo) {
        ox = fast_hi - 1;
        continue;
      }
      const int32_t x0 = ox * g.s_w - g.p_w;
      // The portable kernel's test for an empty window (without dilation): such
      // an output is left as it is; a window that only dilation empties gives 0, 0.
      if (y0 >= g.in_h || x0 >= g.in_w || y0 + g.k_h <= 0 || x0 + g.k_w <= 0) {
        continue;
      }
      int32_t kx0, kx1;
      util::tap_range(x0, g.k_w, g.d_w, g.in_w, &kx0, &kx1);
      if (ky0 >= ky1 || kx0 >= kx1) {
        out[ox] = 0.0f;
        idx[ox] = 0;
        continue;
      }
      // Rows in order, the first element starts the maximum, a strictly greater
      // one replaces it.
      int32_t best_i = (y0 + ky0 * g.d_h) * g.in_w + x0 + kx0 * g.d_w;
#if COREV_SOFT_FLOAT
      bool nan = false;
      int32_t best_k = key(util::bits(in[best_i]));
#else
      float best = in[best_i];
#endif
      for (int32_t ky = ky0; ky < ky1; ++ky) {
        const int32_t row = (y0 + ky * g.d_h) * g.in_w + x0;
        for (int32_t kx = kx0; kx < kx1; ++kx) {
          const int32_t i = row + kx * g.d_w;
#if COREV_SOFT_FLOAT
          const uint32_t u = util::bits(in[i]);
          nan |= (u & 0x7fffffff) > 0x7f800000;
          const int32_t k = key(u);
          if (k > best_k) {
            best_k = k;
            best_i = i;
          }
#else
          const float v = in[i];
          if (v > best) {
            best = v;
            best_i = i;
          }
#endif
        }
      }
#if COREV_SOFT_FLOAT
      if (__builtin_expect(nan, 0)) {
        // Float comparisons, as the portable kernel makes them.
        best_i = (y0 + ky0 * g.d_h) * g.in_w + x0 + kx0 * g.d_w;
        float best = in[best_i];
        for (int32_t ky = ky0; ky < ky1; ++ky) {
          for (int32_t kx = kx0; kx < kx1; ++kx) {
            const int32_t i = (y0 + ky * g.d_h) * g.in_w + x0 + kx * g.d_w;
            if (in[i] > best) {
              best = in[i];
              best_i = i;
            }
          }
        }
      }
#endif
      out[ox] = in[best_i];
      idx[ox] = best_i;
    }
  }
}

}  // namespace

std::tuple<Tensor&, Tensor&> max_pool2d_with_indices_out(
    KernelRuntimeContext& ctx, const Tensor& in, ArrayRef<int64_t> kernel_size,
    ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
    ArrayRef<int64_t> dilation, bool ceil_mode, Tensor& out, Tensor& indices) {
  std::tuple<Tensor&, Tensor&> ret(out, indices);
  if (!(util::is_float(in) && util::is_float(out) &&
        indices.scalar_type() == executorch::aten::ScalarType::Long &&
        (in.dim() == 3 || in.dim() == 4) && util::contiguous(in) &&
        util::contiguous(out) && util::contiguous(indices) &&
        torch::executor::check_max_pool2d_with_indices_args(
            in, kernel_size, stride, padding, dilation, ceil_mode, out,
            indices))) {
    COREV_FALLBACK(ctx, ret,
                   torch::executor::native::max_pool2d_with_indices_out(
                       ctx, in, kernel_size, stride, padding, dilation,
                       ceil_mode, out, indices));
  }
  executorch::aten::SizesType out_sizes[executorch::runtime::kTensorDimensionLimit];
  size_t out_ndim = 0;
  torch::executor::get_max_pool2d_with_indices_out_target_size(
      in, kernel_size, stride, padding, dilation, ceil_mode, out_sizes, &out_ndim);
  ET_KERNEL_CHECK(ctx,
                  torch::executor::output_size_is_valid({out_sizes, out_ndim}, 2),
                  InvalidArgument, ret);
  ET_KERNEL_CHECK(ctx,
                  executorch::runtime::resize_tensor(out, {out_sizes, out_ndim}) ==
                          executorch::runtime::Error::Ok &&
                      executorch::runtime::resize_tensor(
                          indices, {out_sizes, out_ndim}) ==
                          executorch::runtime::Error::Ok,
                  InvalidArgument, ret);
  const int64_t nd = in.dim();
  Geometry g;
  g.in_h = in.size(nd - 2);
  g.in_w = in.size(nd - 1);
  g.out_h = out_sizes[out_ndim - 2];
  g.out_w = out_sizes[out_ndim - 1];
  using torch::executor::val_at;
  g.k_h = val_at(kernel_size, 0);
  g.k_w = val_at(kernel_size, 1);
  g.s_h = val_at(stride, 0, /*default_value=*/g.k_h);
  g.s_w = val_at(stride, 1, /*default_value=*/g.k_w);
  g.p_h = val_at(padding, 0, /*default_value=*/0);
  g.p_w = val_at(padding, 1, /*default_value=*/0);
  g.d_h = val_at(dilation, 0, /*default_value=*/1);
  g.d_w = val_at(dilation, 1, /*default_value=*/1);
  const size_t planes = in.numel() / ((size_t)g.in_h * g.in_w);
  const float* src = in.const_data_ptr<float>();
  float* dst = out.mutable_data_ptr<float>();
  int64_t* idx = indices.mutable_data_ptr<int64_t>();
  for (size_t c = 0; c < planes; ++c) {
    pool_plane(src + c * g.in_h * g.in_w, dst + c * g.out_h * g.out_w,
               idx + c * g.out_h * g.out_w, g);
  }
  return ret;
}

}  // namespace native
}  // namespace corev
