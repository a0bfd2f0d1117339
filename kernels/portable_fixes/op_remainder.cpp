/*
 * aten::remainder.Tensor_out and remainder.Scalar_out for integer tensors. PyTorch's
 * remainder (Python's %) takes the divisor's sign: -8 % 3 == 1. ExecuTorch v1.4.1's
 * portable kernel computes integers with C's %, which takes the dividend's sign
 * (utils::remainder_override in kernels/portable/cpu/util/math_util.h), so it gave -2,
 * with exit status 0. The checks, broadcasting and dtype handling are the portable
 * kernel's (kernels/portable/cpu/op_remainder.cpp); only the integer remainder differs.
 * Other dtypes (a model's keys bring only integers here: coverage.yaml; ops=all brings
 * every dtype) go to that kernel.
 */
#include <executorch/kernels/portable/cpu/scalar_utils.h>
#include <executorch/kernels/portable/cpu/util/elementwise_util.h>
#include <executorch/runtime/kernel/kernel_includes.h>

// kernels/portable/cpu/op_remainder.cpp, compiled beside this file (fallback: true in
// library.yaml): floating-point remainders, for ops=all, where every dtype comes here.
#include "../corev/portable_fallback.h"

namespace portable_fixes {
namespace native {

using executorch::aten::Scalar;
using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::runtime::Error;
using torch::executor::KernelRuntimeContext;
namespace utils = torch::executor::native::utils;

namespace {

template <typename T>
T floor_remainder(T a, T b) {
  // The smallest integer % -1 overflows in C (a trap on some cores); the remainder is 0.
  if (b == T(-1)) {
    return 0;
  }
  T rem = static_cast<T>(a % b);
  if (rem != 0 && ((rem < 0) != (b < 0))) {
    rem = static_cast<T>(rem + b);
  }
  return rem;
}

}  // namespace

Tensor& remainder_Tensor_out(KernelRuntimeContext& ctx, const Tensor& a, const Tensor& b,
                             Tensor& out) {
  ScalarType common_type = executorch::runtime::promoteTypes(a.scalar_type(), b.scalar_type());
  // (Bool is no integral type here: the tree's kernel refuses it, as PyTorch does)
  if (!executorch::runtime::isIntegralType(common_type, /*includeBool=*/false)) {
    return torch::executor::native::remainder_Tensor_out(ctx, a, b, out);
  }
  ET_KERNEL_CHECK(ctx, executorch::runtime::canCast(common_type, out.scalar_type()),
                  InvalidArgument, out);
  ET_KERNEL_CHECK(ctx, executorch::runtime::tensors_have_same_dim_order(a, b, out),
                  InvalidArgument, out);
  ET_KERNEL_CHECK(ctx,
                  torch::executor::resize_to_broadcast_target_size(a, b, out) == Error::Ok,
                  InvalidArgument, out);

  ScalarType compute_type = utils::get_compute_type(common_type);
  // @lint-ignore CLANGTIDY facebook-hte-CArray
  ET_DEFINE_OPERATOR_NAME(op_name, "remainder.Tensor_out");
  bool div_by_zero = false;
  ET_SWITCH_INT_TYPES(compute_type, ctx, op_name, CTYPE_COMPUTE, [&]() {
    utils::apply_bitensor_elementwise_fn<CTYPE_COMPUTE, op_name,
                                         utils::SupportedTensorDtypes::REALHBF16>(
        [&div_by_zero](const CTYPE_COMPUTE val_a, const CTYPE_COMPUTE val_b) {
          if (val_b == 0) {
            div_by_zero = true;
            return CTYPE_COMPUTE(0);
          }
          return floor_remainder(val_a, val_b);
        },
        ctx, a, utils::SupportedTensorDtypes::REALHBBF16, b,
        utils::SupportedTensorDtypes::REALHBBF16, out);
  });
  ET_KERNEL_CHECK_MSG(ctx, !div_by_zero, InvalidArgument, out,
                      "Remainder operation encountered integer division by zero");
  return out;
}

Tensor& remainder_Scalar_out(KernelRuntimeContext& ctx, const Tensor& a, const Scalar& b,
                             Tensor& out) {
  ScalarType common_type = utils::promote_type_with_scalar(a.scalar_type(), b);
  if (!executorch::runtime::isIntegralType(common_type, /*includeBool=*/false)) {
    return torch::executor::native::remainder_Scalar_out(ctx, a, b, out);
  }
  ET_KERNEL_CHECK(ctx, executorch::runtime::canCast(common_type, out.scalar_type()),
                  InvalidArgument, out);
  ET_KERNEL_CHECK_MSG(ctx, utils::scalar_to<double>(b) != 0, InvalidArgument, out,
                      "Remainder operation encountered integer division by zero");
  ET_KERNEL_CHECK(ctx, executorch::runtime::tensors_have_same_dim_order(a, out),
                  InvalidArgument, out);
  ET_KERNEL_CHECK(ctx, executorch::runtime::resize_tensor(out, a.sizes()) == Error::Ok,
                  InvalidArgument, out);

  ScalarType compute_type = utils::get_compute_type(common_type);
  // @lint-ignore CLANGTIDY facebook-hte-CArray
  ET_DEFINE_OPERATOR_NAME(op_name, "remainder.Scalar_out");
  ET_SWITCH_INT_TYPES(compute_type, ctx, op_name, CTYPE_COMPUTE, [&]() {
    const CTYPE_COMPUTE val_b = utils::scalar_to<CTYPE_COMPUTE>(b);
    utils::apply_unitensor_elementwise_fn<CTYPE_COMPUTE, op_name,
                                          utils::SupportedTensorDtypes::REALHBF16>(
        [val_b](const CTYPE_COMPUTE val_a) { return floor_remainder(val_a, val_b); }, ctx, a,
        utils::SupportedTensorDtypes::REALHBBF16, out);
  });
  return out;
}

}  // namespace native
}  // namespace portable_fixes
