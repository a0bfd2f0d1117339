/*
 * aten::permute_copy.out for the CORE-V core.
 *
 * Fast path: in and out contiguous, any dtype of 1, 2, 4 or 8 bytes. Output
 * dimensions are walked in order with an odometer over the input strides; size-1
 * dimensions are dropped and output dimensions that are contiguous in the input too
 * are merged, so a permutation that keeps the memory order is one memcpy and a 2-D
 * transpose is a strided inner loop. Everything else: the portable kernel.
 */
#include "corev_util.h"
#include "portable_fallback.h"

namespace corev {
namespace native {

using executorch::aten::ArrayRef;
using executorch::aten::Tensor;
using torch::executor::KernelRuntimeContext;

namespace {

constexpr size_t kMaxDim = executorch::runtime::kTensorDimensionLimit;

template <typename T>
COREV_HOT void permute(const T* in, T* out, const size_t* size,
                       const ptrdiff_t* stride, size_t nd) {
  // nd >= 1; the innermost output dimension is size[nd - 1] with input stride
  // stride[nd - 1].
  size_t counter[kMaxDim] = {0};
  const size_t inner = size[nd - 1];
  const ptrdiff_t s = stride[nd - 1];
  while (true) {
    const T* src = in;
    size_t j = 0;
    for (; j + 4 <= inner; j += 4) {
      T v0 = src[0], v1 = src[s], v2 = src[2 * s], v3 = src[3 * s];
      out[0] = v0;
      out[1] = v1;
      out[2] = v2;
      out[3] = v3;
      out += 4;
      src += 4 * s;
    }
    for (; j < inner; ++j) {
      *out++ = *src;
      src += s;
    }
    // Next row: increment the odometer over the outer dimensions.
    size_t d = nd - 1;
    while (true) {
      if (d == 0) {
        return;
      }
      --d;
      in += stride[d];
      if (++counter[d] < size[d]) {
        break;
      }
      counter[d] = 0;
      in -= stride[d] * (ptrdiff_t)size[d];
    }
  }
}

}  // namespace

Tensor& permute_copy_out(KernelRuntimeContext& ctx, const Tensor& in,
                         ArrayRef<int64_t> dims, Tensor& out) {
  const size_t nd = in.dim();
  const size_t esize = in.element_size();
  bool fast = in.scalar_type() == out.scalar_type() && dims.size() == nd &&
              nd <= kMaxDim && util::contiguous(in) && util::contiguous(out) &&
              (esize == 1 || esize == 2 || esize == 4 || esize == 8);
  executorch::aten::SizesType out_sizes[kMaxDim];
  if (fast) {
    bool seen[kMaxDim] = {false};
    for (size_t i = 0; i < nd; ++i) {
      int64_t d = dims[i] < 0 ? dims[i] + (int64_t)nd : dims[i];
      if (d < 0 || d >= (int64_t)nd || seen[d]) {
        fast = false;
        break;
      }
      seen[d] = true;
      out_sizes[i] = in.size(d);
    }
  }
  if (!fast) {
    COREV_FALLBACK(ctx, out,
                   torch::executor::native::permute_copy_out(ctx, in, dims, out));
  }
  ET_KERNEL_CHECK(ctx,
                  executorch::runtime::resize_tensor(out, {out_sizes, nd}) ==
                      executorch::runtime::Error::Ok,
                  InvalidArgument, out);
  if (in.numel() == 0) {
    return out;
  }
  // Input strides (in elements) of the contiguous input.
  ptrdiff_t in_stride[kMaxDim];
  ptrdiff_t st = 1;
  for (size_t d = nd; d-- > 0;) {
    in_stride[d] = st;
    st *= in.size(d);
  }
  // Output dimensions: size and input stride, size-1 dimensions dropped, a
  // dimension merged into the previous one when it continues it in the input.
  size_t size[kMaxDim];
  ptrdiff_t stride[kMaxDim];
  size_t n = 0;
  for (size_t i = 0; i < nd; ++i) {
    int64_t d = dims[i] < 0 ? dims[i] + (int64_t)nd : dims[i];
    size_t sz = in.size(d);
    if (sz == 1) {
      continue;
    }
    if (n > 0 && stride[n - 1] == in_stride[d] * (ptrdiff_t)sz) {
      size[n - 1] *= sz;
      stride[n - 1] = in_stride[d];
      continue;
    }
    size[n] = sz;
    stride[n] = in_stride[d];
    ++n;
  }
  if (n == 0 || (n == 1 && stride[0] == 1)) {
    memcpy(out.mutable_data_ptr(), in.const_data_ptr(), in.nbytes());
    return out;
  }
  switch (esize) {
    case 1:
      permute(static_cast<const uint8_t*>(in.const_data_ptr()),
              static_cast<uint8_t*>(out.mutable_data_ptr()), size, stride, n);
      break;
    case 2:
      permute(static_cast<const uint16_t*>(in.const_data_ptr()),
              static_cast<uint16_t*>(out.mutable_data_ptr()), size, stride, n);
      break;
    case 4:
      permute(static_cast<const uint32_t*>(in.const_data_ptr()),
              static_cast<uint32_t*>(out.mutable_data_ptr()), size, stride, n);
      break;
    default:
      permute(static_cast<const uint64_t*>(in.const_data_ptr()),
              static_cast<uint64_t*>(out.mutable_data_ptr()), size, stride, n);
      break;
  }
  return out;
}

}  // namespace native
}  // namespace corev
