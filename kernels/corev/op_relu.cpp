/*
 * aten::relu.out for the CORE-V core: float32 on the bits (both ISAs), one word at
 * a time, unrolled by 4. Negative numbers become +0; -0 and NaNs stay, as in the
 * portable kernel (`isnan(x) || x >= 0 ? x : 0`). Any layout works as long as in
 * and out share it. Other dtypes: the portable kernel.
 */
#include "corev_util.h"
#include "portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

namespace {

// Negative, nonzero and not NaN: 0x80000001 .. 0xff800000.
COREV_INLINE uint32_t relu_bits(uint32_t u) {
  return u - 0x80000001u <= 0x7f7fffffu ? 0u : u;
}

COREV_HOT void relu_words(const uint32_t* in, uint32_t* out, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t a = in[i], b = in[i + 1], c = in[i + 2], d = in[i + 3];
    out[i] = relu_bits(a);
    out[i + 1] = relu_bits(b);
    out[i + 2] = relu_bits(c);
    out[i + 3] = relu_bits(d);
  }
  for (; i < n; ++i) {
    out[i] = relu_bits(in[i]);
  }
}

}  // namespace

Tensor& relu_out(KernelRuntimeContext& ctx, const Tensor& in, Tensor& out) {
  if (!(util::is_float(in) && util::is_float(out) &&
        executorch::runtime::tensors_have_same_dim_order(in, out))) {
    COREV_FALLBACK(ctx, out, torch::executor::native::relu_out(ctx, in, out));
  }
  ET_KERNEL_CHECK(ctx,
                  executorch::runtime::resize_tensor(out, in.sizes()) ==
                      executorch::runtime::Error::Ok,
                  InvalidArgument, out);
  relu_words(static_cast<const uint32_t*>(in.const_data_ptr()),
             static_cast<uint32_t*>(out.mutable_data_ptr()), in.numel());
  return out;
}

}  // namespace native
}  // namespace corev
