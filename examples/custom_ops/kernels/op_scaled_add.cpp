/*
 * my_ops::scaled_add.out(Tensor x, Tensor y, float alpha, *, Tensor(a!) out) -> Tensor(a!)
 *
 * out = x + alpha * y, element by element, for float32 tensors of the same shape.
 *
 * An ExecuTorch kernel: the runtime context comes first, then the schema's arguments in
 * order (a schema `float` is a C++ `double`), and the out tensor is returned. A kernel does
 * not abort on bad arguments: ET_KERNEL_CHECK records the error in the context, which the
 * runtime reports as the method's failure, and returns `out` unchanged.
 */

#include <executorch/runtime/kernel/kernel_includes.h>

namespace my_ops {
namespace native {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::runtime::Error;
using executorch::runtime::KernelRuntimeContext;

Tensor& scaled_add_out(
    KernelRuntimeContext& ctx,
    const Tensor& x,
    const Tensor& y,
    double alpha,
    Tensor& out) {
  ET_KERNEL_CHECK_MSG(
      ctx,
      x.scalar_type() == ScalarType::Float &&
          y.scalar_type() == ScalarType::Float &&
          out.scalar_type() == ScalarType::Float,
      InvalidArgument,
      out,
      "scaled_add.out: float32 tensors only");
  ET_KERNEL_CHECK_MSG(
      ctx,
      executorch::runtime::tensors_have_same_shape(x, y),
      InvalidArgument,
      out,
      "scaled_add.out: x and y differ in shape");
  // The output's shape follows the inputs' (dynamic shapes resize it here; a static one
  // must already match).
  ET_KERNEL_CHECK_MSG(
      ctx,
      executorch::runtime::resize_tensor(out, x.sizes()) == Error::Ok,
      InvalidArgument,
      out,
      "scaled_add.out: cannot resize out to the inputs' shape");
  // The loop below walks all three tensors in memory order.
  ET_KERNEL_CHECK(
      ctx,
      executorch::runtime::tensors_have_same_dim_order(x, y, out),
      InvalidArgument,
      out);

  const float* x_data = x.const_data_ptr<float>();
  const float* y_data = y.const_data_ptr<float>();
  float* out_data = out.mutable_data_ptr<float>();
  const float a = static_cast<float>(alpha);
  const size_t n = static_cast<size_t>(out.numel());
  for (size_t i = 0; i < n; ++i) {
    out_data[i] = x_data[i] + a * y_data[i];
  }
  return out;
}

} // namespace native
} // namespace my_ops
