// The executor runner's functions for the features of a model that need the runtime
// (runner_model.h): inputs and outputs the program does not plan, dynamic input shapes.
// Compiled once per variant for each combination of RUNNER_UNPLANNED_IO and
// RUNNER_DYNAMIC_INPUTS (0 or 1 each, defined by the build for the model), not per model.
#include "runner_model.h"

#if RUNNER_UNPLANNED_IO || RUNNER_DYNAMIC_INPUTS
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#endif

namespace runner_model {

using executorch::runtime::Error;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Result;

#if RUNNER_UNPLANNED_IO
// The bytes of input (or output) `index` if it is a tensor the program does not plan,
// else 0.
Result<size_t> unplanned_bytes(const MethodMeta& meta, size_t index, bool output) {
  Result<executorch::runtime::Tag> tag = output ? meta.output_tag(index) : meta.input_tag(index);
  if (!tag.ok() || *tag != executorch::runtime::Tag::Tensor) return size_t{0};
  Result<executorch::runtime::TensorInfo> info =
      output ? meta.output_tensor_meta(index) : meta.input_tensor_meta(index);
  if (!info.ok()) return info.error();
  return info->is_memory_planned() ? size_t{0} : info->nbytes();
}

Result<void**> give_unplanned_io_memory(Method& method, const MethodMeta& meta,
                                        MemoryAllocator& allocator) {
  // (+1: a method without inputs still gets a list, not nullptr, which means "none")
  void** given = allocator.allocateList<void*>(method.inputs_size() + 1);
  if (given == nullptr) return Error::MemoryAllocationFailed;
  for (size_t i = 0; i < method.inputs_size(); ++i) {
    Result<size_t> nbytes = unplanned_bytes(meta, i, false);
    if (!nbytes.ok()) return nbytes.error();
    given[i] = nullptr;
    if (*nbytes == 0) continue;
    given[i] = allocator.allocate(*nbytes, 16);
    if (given[i] == nullptr) return Error::MemoryAllocationFailed;
    // Method::set_input shares a tensor's data the same way.
    const Error set = executorch::runtime::internal::set_tensor_data(
        method.get_input(i).toTensor(), given[i], *nbytes);
    if (set != Error::Ok) return set;
  }
  for (size_t i = 0; i < method.outputs_size(); ++i) {
    Result<size_t> nbytes = unplanned_bytes(meta, i, true);
    if (!nbytes.ok()) return nbytes.error();
    if (*nbytes == 0) continue;
    void* data = allocator.allocate(*nbytes, 16);
    if (data == nullptr) return Error::MemoryAllocationFailed;
    const Error set = method.set_output_data_ptr(data, *nbytes, i);
    if (set != Error::Ok) return set;
  }
  return given;
}
#else
Result<void**> give_unplanned_io_memory(Method&, const MethodMeta&, MemoryAllocator&) {
  return static_cast<void**>(nullptr);
}
#endif

Error resize_input(const executorch::aten::Tensor& tensor, size_t index) {
#if RUNNER_DYNAMIC_INPUTS
  const executorch::aten::ArrayRef<int32_t> sizes(inputs[index].sizes, inputs[index].dim);
  if (!(sizes == tensor.sizes())) return executorch::runtime::resize_tensor(tensor, sizes);
#else
  (void)tensor;
  (void)index;
#endif
  return Error::Ok;
}

}  // namespace runner_model
