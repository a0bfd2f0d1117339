// The model's part of the executor runner (runner_model.h), compiled per model with
// the runner_config.h the build generated from its .pte.
#include "runner_model.h"

#include <cstring>

#include "runner_config.h"

#if RUNNER_UNPLANNED_IO || RUNNER_DYNAMIC_INPUTS
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#endif

namespace runner_model {

#define NOINIT __attribute__((section(".noinit"), aligned(16)))
NOINIT uint8_t method_pool[RUNNER_METHOD_POOL_SIZE];
const size_t method_pool_size = RUNNER_METHOD_POOL_SIZE;
NOINIT uint8_t temp_pool[RUNNER_TEMP_POOL_SIZE > 0 ? RUNNER_TEMP_POOL_SIZE : 1];
const size_t temp_pool_size = RUNNER_TEMP_POOL_SIZE;
NOINIT uint8_t planned_pool[RUNNER_PLANNED_POOL_SIZE > 0 ? RUNNER_PLANNED_POOL_SIZE : 1];
const size_t planned_pool_size = RUNNER_PLANNED_POOL_SIZE;
executorch::runtime::Span<uint8_t>
    planned_spans[RUNNER_MAX_PLANNED_BUFFERS > 0 ? RUNNER_MAX_PLANNED_BUFFERS : 1];
const size_t max_planned_buffers = RUNNER_MAX_PLANNED_BUFFERS;

const char* const method_name = RUNNER_METHOD_NAME;
const int num_executions = RUNNER_NUM_EXECUTIONS;
const size_t num_outputs = RUNNER_NUM_OUTPUTS;
#if RUNNER_NUM_INPUTS > 0
const Input inputs[] = {RUNNER_INPUTS};
#else
const Input inputs[1] = {};
#endif
const size_t num_inputs = RUNNER_NUM_INPUTS;
#ifdef RUNNER_RTOL
const double rtol = RUNNER_RTOL;
const double atol = RUNNER_ATOL;
#endif

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

void clear_state(const executorch::runtime::Span<uint8_t>* spans) {
#if RUNNER_NUM_STATE_RANGES > 0
  // ExecuTorch plans a mutable buffer without an initial value (unless the program
  // carries one, which load_method writes after this); its runners' arenas start zeroed,
  // the planned pool here is .noinit (not cleared at start-up, for its size).
  static const struct {
    uint32_t span, offset, bytes;
  } ranges[] = {RUNNER_STATE_RANGES};
  for (const auto& range : ranges) {
    memset(spans[range.span].data() + range.offset, 0, range.bytes);
  }
#else
  (void)spans;
#endif
}

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
