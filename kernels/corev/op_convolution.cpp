/*
 * aten::convolution.out for the CORE-V core: 2-D, not transposed, float32,
 * contiguous (NCHW) input, weight and output, any stride, padding, dilation and
 * groups, with or without a float32 bias. Each output element is one dot product
 * over (input channel, kernel row, in-bounds kernel columns) with the bias in it
 * (util::Dot: exact products summed in an integer accumulator and rounded once on
 * rv32imc; fused multiply-adds with an FPU). Other cases (1-D, transposed, other
 * dtypes or layouts): the portable kernel.
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

struct Conv {
  int32_t n, in_c, in_h, in_w, out_c, out_h, out_w, k_h, k_w;
  int32_t s_h, s_w, p_h, p_w, d_h, d_w, groups;
};

/// The generic float arithmetic of the portable kernel, for one output element.
float conv_generic(const float* in, const float* w, const float* bias,
                   const Conv& g, int32_t oy, int32_t ox) {
  const int32_t cpg = g.in_c / g.groups;
  float acc = 0.0f;
  for (int32_t c = 0; c < cpg; ++c) {
    for (int32_t ky = 0; ky < g.k_h; ++ky) {
      const int32_t y = oy * g.s_h + ky * g.d_h - g.p_h;
      if (y < 0 || y >= g.in_h) {
        continue;
      }
      for (int32_t kx = 0; kx < g.k_w; ++kx) {
        const int32_t x = ox * g.s_w + kx * g.d_w - g.p_w;
        if (x >= 0 && x < g.in_w) {
          acc += in[(c * g.in_h + y) * g.in_w + x] * w[(c * g.k_h + ky) * g.k_w + kx];
        }
      }
    }
  }
  return bias != nullptr ? acc + *bias : acc;
}

/// Sums the window rows into d: for each input channel of the group and kernel row
/// in [ky0, ky1), `n` taps from column pointer `in_x` (step d_w) times weights from
/// `w_x` (step 1). Three taps at unit step, the common 3x3 case, are unrolled.
COREV_INLINE void window(util::Dot& d, const float* in, int32_t offset, const float* w_x,
                         const Conv& g, int32_t cpg, int32_t ky0, int32_t ky1,
                         int32_t n) {
  const int32_t in_row = g.d_h * g.in_w;
  const int32_t plane = g.in_h * g.in_w;
  const int32_t w_plane = g.k_h * g.k_w;
  for (int32_t c = 0; c < cpg; ++c) {
    const float* a = in + (offset + c * plane + ky0 * in_row);
    const float* b = w_x + c * w_plane + ky0 * g.k_w;
    if (n == 3 && g.d_w == 1) {
      for (int32_t ky = ky0; ky < ky1; ++ky) {
        d.run3(a, b);
        a += in_row;
        b += g.k_w;
      }
    } else {
      for (int32_t ky = ky0; ky < ky1; ++ky) {
        d.run(a, g.d_w, b, 1, n);
        a += in_row;
        b += g.k_w;
      }
    }
  }
}

/// Outputs [0, n) of a row of 3x3 windows without dilation, all inside the input:
/// `in` points at the first window's top-left tap of the group's first channel,
/// windows `step` floats apart. False if one of them met an infinity or NaN (the
/// caller then computes the row the generic way).
COREV_HOT bool conv3x3_row(const float* in, int32_t step, const float* w,
                           const float* bias, float* out, int32_t n, int32_t cpg,
                           int32_t in_w, int32_t plane) {
#if !COREV_SOFT_FLOAT
  if (cpg == 1) {
    // One input channel: the 9 weights stay in registers; the same fused
    // multiply-adds in the same order as util::Dot.
    const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5],
                w6 = w[6], w7 = w[7], w8 = w[8];
    for (int32_t i = 0; i < n; ++i) {
      const float* a = in + i * step;
      const float* a1 = a + in_w;
      const float* a2 = a1 + in_w;
      float acc = __builtin_fmaf(a[0], w0, 0.0f);
      acc = __builtin_fmaf(a[1], w1, acc);
      acc = __builtin_fmaf(a[2], w2, acc);
      acc = __builtin_fmaf(a1[0], w3, acc);
      acc = __builtin_fmaf(a1[1], w4, acc);
      acc = __builtin_fmaf(a1[2], w5, acc);
      acc = __builtin_fmaf(a2[0], w6, acc);
      acc = __builtin_fmaf(a2[1], w7, acc);
      acc = __builtin_fmaf(a2[2], w8, acc);
      out[i] = bias != nullptr ? acc + *bias : acc;
    }
    return true;
  }
#endif
  bool ok = true;
  for (int32_t i = 0; i < n; ++i) {
    util::Dot d;
    const float* a = in + i * step;
    const float* b = w;
    for (int32_t c = 0; c < cpg; ++c) {
      // Unrolled with an FPU; a loop without (a soft-float tap is long code).
#if COREV_SOFT_FLOAT
#pragma GCC unroll 1
#else
#pragma GCC unroll 3
#endif
      for (int32_t r = 0; r < 3; ++r) {
        d.run3(a + r * in_w, b + 3 * r);
      }
      a += plane;
      b += 9;
    }
    out[i] = d.finish(bias);
    ok = ok && d.ok;
  }
  return ok;
}

/// One output channel plane. in: the group's first input channel; w: this output
/// channel's weights [in_c / groups][k_h][k_w].
COREV_HOT void conv_plane(const float* in, const float* w, const float* bias,
                          float* out, const Conv& g) {
  const int32_t cpg = g.in_c / g.groups;
  const int32_t plane = g.in_h * g.in_w;
  // 3x3 kernels without dilation: a window inside the input is 9 taps per channel
  // at fixed offsets, unrolled.
  const bool k3 = g.k_h == 3 && g.k_w == 3 && g.d_h == 1 && g.d_w == 1;
  // Outputs [ox_lo, ox_hi) have windows inside the input horizontally.
  int32_t ox_lo = 0, ox_hi = 0;
  if (k3 && g.in_w - 3 + g.p_w >= 0) {
    ox_lo = (g.p_w + g.s_w - 1) / g.s_w;
    ox_hi = (g.in_w - 3 + g.p_w) / g.s_w + 1;
    ox_hi = ox_hi < g.out_w ? ox_hi : g.out_w;
    ox_lo = ox_lo < ox_hi ? ox_lo : ox_hi;
  }
  for (int32_t oy = 0; oy < g.out_h; ++oy, out += g.out_w) {
    const int32_t y0 = oy * g.s_h - g.p_h;
    int32_t ky0, ky1;
    util::tap_range(y0, g.k_h, g.d_h, g.in_h, &ky0, &ky1);
    int32_t fast_lo = 0, fast_hi = 0;
    if (k3 && ky0 == 0 && ky1 == 3 && ox_hi > ox_lo) {
      const int32_t x0 = ox_lo * g.s_w - g.p_w;
      if (conv3x3_row(in + (y0 * g.in_w + x0), g.s_w, w, bias, out + ox_lo,
                      ox_hi - ox_lo, cpg, g.in_w, plane)) {
        fast_lo = ox_lo;
        fast_hi = ox_hi;
      }
    }
    for (int32_t ox = 0; ox < g.out_w; ++ox) {
      if (ox == fast_lo && fast_hi > fast_lo) {
        ox = fast_hi - 1;
        continue;
      }
      const int32_t x0 = ox * g.s_w - g.p_w;
      util::Dot d;
      int32_t kx0, kx1;
      util::tap_range(x0, g.k_w, g.d_w, g.in_w, &kx0, &kx1);
      if (kx1 > kx0 && ky1 > ky0) {
        window(d, in, y0 * g.in_w + x0 + kx0 * g.d_w, w + kx0, g, cpg, ky0, ky1,
               kx1 - kx0);
      }
      float r = d.finish(bias);
      if (__builtin_expect(!d.ok, 0)) {
        r = conv_generic(in, w, bias, g, oy, ox);
      }
      out[ox] = r;
    }
  }
}

}  // namespace

Tensor& convolution_out(KernelRuntimeContext& ctx, const Tensor& in,
                        const Tensor& weight,
                        const std::optional<Tensor>& bias,
                        ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                        ArrayRef<int64_t> dilation, bool transposed,
                        ArrayRef<int64_t> output_padding, int64_t groups,
                        Tensor& out) {
  const bool has_bias = bias.has_value();
  if (!(!transposed && in.dim() == 4 && util::is_float(in) &&
        util::is_float(weight) && util::is_float(out) &&
        (!has_bias || (util::is_float(bias.value()) &&
                       bias.value().numel() == weight.size(0))) &&
        util::contiguous(in) && util::contiguous(weight) && util::contiguous(out) &&
        torch::executor::check_convolution_args(in, weight, bias, stride, padding,
                                                dilation, transposed,
                                                output_padding, groups, out))) {
    COREV_FALLBACK(ctx, out,
                   torch::executor::native::convolution_out(
                       ctx, in, weight, bias, stride, padding, dilation,
                       transposed, output_padding, groups, out));
  }
  executorch::aten::SizesType out_sizes[executorch::runtime::kTensorDimensionLimit];
  size_t out_ndim = 0;
  torch::executor::get_convolution_out_target_size(
      in, weight, stride, padding, dilation, transposed, output_padding, groups,
      out_sizes, &out_ndim);
  ET_KERNEL_CHECK(ctx,
                  torch::executor::output_size_is_valid({out_sizes, out_ndim},
                                                        in.dim() - 2),
                  InvalidArgument, out);
  ET_KERNEL_CHECK(ctx,
                  executorch::runtime::resize_tensor(out, {out_sizes, out_ndim}) ==
                      executorch::runtime::Error::Ok,
                  InvalidArgument, out);
  if (out.numel() == 0) {
    return out;
  }
  using torch::executor::val_at;
  Conv g;
  g.n = in.size(0);
  g.in_c = in.size(1);
  g.in_h = in.size(2);
  g.in_w = in.size(3);
  g.out_c = out.size(1);
  g.out_h = out.size(2);
  g.out_w = out.size(3);
  g.k_h = weight.size(2);
  g.k_w = weight.size(3);
  g.s_h = val_at(stride, 0);
  g.s_w = val_at(stride, 1);
  g.p_h = val_at(padding, 0, /*default_value=*/0);
  g.p_w = val_at(padding, 1, /*default_value=*/0);
  g.d_h = val_at(dilation, 0);
  g.d_w = val_at(dilation, 1);
  g.groups = groups;
  const float* x = in.const_data_ptr<float>();
  const float* w = weight.const_data_ptr<float>();
  const float* b = has_bias ? bias.value().const_data_ptr<float>() : nullptr;
  float* y = out.mutable_data_ptr<float>();
  const int32_t cpg = g.in_c / g.groups;
  const int32_t opg = g.out_c / g.groups;
  const int32_t in_plane = g.in_h * g.in_w;
  const int32_t out_plane = g.out_h * g.out_w;
  const int32_t w_size = cpg * g.k_h * g.k_w;
  for (int32_t n = 0; n < g.n; ++n) {
    for (int32_t oc = 0; oc < g.out_c; ++oc) {
      const int32_t group = oc / opg;
      conv_plane(x + (n * g.in_c + group * cpg) * in_plane, w + oc * w_size,
                 b != nullptr ? b + oc : nullptr,
                 y + (n * g.out_c + oc) * out_plane, g);
    }
  }
  return out;
}

}  // namespace native
}  // namespace corev
