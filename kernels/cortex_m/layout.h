/*
 * Tensors of any dim order, for the operators of kernels/cortex_m.
 *
 * ExecuTorch's Cortex-M passes give some operators tensors in different dim orders: a
 * cortex_m::minimum, maximum or transpose whose 4-D inputs are channels-last (dim order
 * 0, 2, 3, 1, as the backend wants activations) gets a contiguous output (0, 1, 2, 3),
 * because the operator's shape function makes its output with torch.empty. ExecuTorch's
 * kernels (and CMSIS-NN) walk memory as if every tensor had the same order, and compute
 * values in the wrong places. The kernels here look at each tensor's dim order: where
 * the orders agree they hand CMSIS-NN the sizes in memory order, elsewhere they walk the
 * logical index and address each tensor through its strides.
 */
#pragma once

#include <executorch/backends/cortex_m/ops/cortex_m_ops_common.h>

#include <cstring>

namespace cortex_m {
namespace native {
namespace layout {

// ExecuTorch's limit on a tensor's rank (runtime/core/exec_aten/util/
// tensor_dimension_limit.h).
constexpr size_t kMaxDims = 16;

inline bool same_dim_order(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) {
    return false;
  }
  // (the arrays fetched once: each accessor is a call at -Os)
  const auto ao = a.dim_order();
  const auto bo = b.dim_order();
  for (ssize_t i = 0; i < a.dim(); i++) {
    if (ao[i] != bo[i]) {
      return false;
    }
  }
  return true;
}

// Do a and b (of one shape) lie alike in memory: their dimensions of more than one
// element in the same order? (Dim orders may differ in where the size-1 dimensions go.)
inline bool same_memory_order(const Tensor& a, const Tensor& b) {
  const auto sizes = a.sizes();
  if (sizes != b.sizes()) {
    return false;
  }
  const auto ao = a.dim_order();
  const auto bo = b.dim_order();
  const ssize_t n = a.dim();
  ssize_t i = 0, j = 0;
  while (true) {
    while (i < n && sizes[ao[i]] == 1) {
      i++;
    }
    while (j < n && sizes[bo[j]] == 1) {
      j++;
    }
    if (i == n || j == n) {
      return i == n && j == n;
    }
    if (ao[i++] != bo[j++]) {
      return false;
    }
  }
}

// Is logical dimension `dim` the innermost in memory (stride 1)?
inline bool innermost(const Tensor& t, int64_t dim) {
  return t.dim() > 0 && t.dim_order()[t.dim() - 1] == dim;
}

// The sizes in memory order, outermost first.
inline void memory_sizes(const Tensor& t, int32_t* sizes) {
  for (ssize_t i = 0; i < t.dim(); i++) {
    sizes[i] = static_cast<int32_t>(t.size(t.dim_order()[i]));
  }
}

// The element offset in t of a logical index of an output of rank `rank` (t's
// dimensions right-aligned to it; a dimension of size 1 broadcasts).
inline size_t offset_of(const Tensor& t, const int64_t* index, ssize_t rank) {
  const ssize_t lead = rank - t.dim();
  size_t offset = 0;
  for (ssize_t d = 0; d < t.dim(); d++) {
    if (t.size(d) != 1) {
      offset += static_cast<size_t>(index[lead + d]) * static_cast<size_t>(t.strides()[d]);
    }
  }
  return offset;
}

// Steps a logical index over t's sizes, the last dimension fastest, skipping dimension
// `skip` (-1: none); false after the last index.
inline bool next_index(int64_t* index, const Tensor& t, int64_t skip = -1) {
  for (ssize_t d = t.dim() - 1; d >= 0; d--) {
    if (d == skip) {
      continue;
    }
    if (++index[d] < t.size(d)) {
      return true;
    }
    index[d] = 0;
  }
  return false;
}

// Do a's and b's sizes broadcast to out's (right-aligned, size 1 against any)?
inline bool broadcasts_to(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (a.dim() > out.dim() || b.dim() > out.dim()) {
    return false;
  }
  for (ssize_t d = 0; d < out.dim(); d++) {
    const ssize_t da = d - (out.dim() - a.dim());
    const ssize_t db = d - (out.dim() - b.dim());
    const int64_t sa = da >= 0 ? a.size(da) : 1;
    const int64_t sb = db >= 0 ? b.size(db) : 1;
    const int64_t want = sa == 1 ? sb : sa;
    if ((sb != 1 && sb != sa && sa != 1) || out.size(d) != want) {
      return false;
    }
  }
  return true;
}

// Are a, b and out int8, and do a's and b's sizes broadcast to out's? Otherwise the
// context fails with InvalidArgument (the error logged with the operator's name).
inline bool int8_binary_args(
    KernelRuntimeContext& context,
    const char* name,
    const Tensor& a,
    const Tensor& b,
    const Tensor& out) {
  if (a.scalar_type() != ScalarType::Char || b.scalar_type() != ScalarType::Char ||
      out.scalar_type() != ScalarType::Char) {
    ET_LOG(Error, "%s: int8 tensors expected", name);
    context.fail(Error::InvalidArgument);
    return false;
  }
  if (!broadcasts_to(a, b, out)) {
    ET_LOG(Error, "%s: the inputs' sizes do not broadcast to the output's", name);
    context.fail(Error::InvalidArgument);
    return false;
  }
  return true;
}

} // namespace layout
} // namespace native
} // namespace cortex_m
