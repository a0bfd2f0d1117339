// What the executor runner knows of its model. The runner itself is compiled once per
// variant; this is defined per model: by runner_model.cpp from the generated
// runner_config.h (pools sized from the .pte, the inputs given to the build) and, with
// profile=1, by cycle_tracer.cpp (its tables sized for the method), with
// profile=etdump by etdump_tracer.cpp (its buffer sized for the method). With LTO the
// sizes are constants in the runner's code as if it had included the header itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>

namespace executorch {
namespace runtime {
class EventTracer;
}  // namespace runtime
}  // namespace executorch

namespace runner_model {

struct Input {
  const uint8_t* data;
  size_t size;
  const int32_t* sizes;  // its shape (a dynamic one's, at most the planned bound)
  size_t dim;
};

// Static memory; the pools are in .noinit, so startup spends no cycles clearing them.
extern uint8_t method_pool[];
extern const size_t method_pool_size;
extern uint8_t temp_pool[];
extern const size_t temp_pool_size;
extern uint8_t planned_pool[];
extern const size_t planned_pool_size;
extern executorch::runtime::Span<uint8_t> planned_spans[];
extern const size_t max_planned_buffers;

extern const char* const method_name;  // the method to run (method=; else the first)
extern const int num_executions;
extern const size_t num_outputs;
extern const Input inputs[];  // the values given to the build (inputs=), in order
extern const size_t num_inputs;

// Inputs and outputs the program does not plan (exported with ExecuTorch's
// MemoryPlanningPass(alloc_graph_input=False, alloc_graph_output=False)) are the
// caller's to provide, as ExecuTorch's own runner does. Here they come from the method
// pool: the build sized it for them (runner_config.py, unplanned_io_bytes). Returns the
// inputs' buffers by input index (nullptr: planned, or not a tensor), or nullptr for a
// model without them, whose image then links none of this.
executorch::runtime::Result<void**> give_unplanned_io_memory(
    executorch::runtime::Method& method, const executorch::runtime::MethodMeta& meta,
    executorch::runtime::MemoryAllocator& allocator);

// A dynamic shape is planned at its bound, and the given input (inputs[index]) may be
// smaller: the tensor is resized to its sizes, as Method::set_input does. Nothing for a
// model without dynamic inputs.
executorch::runtime::Error resize_input(const executorch::aten::Tensor& tensor, size_t index);
// Zeroes the planned memory of the method's mutable buffers (and what else a kernel reads
// before any writes it), which ExecuTorch's runners start from zeroed memory.
void clear_state(const executorch::runtime::Span<uint8_t>* spans);

// A bundled program (.bpte): the tolerances its test cases are checked with (rtol=,
// atol=; floats only, other dtypes compare exactly).
extern const double rtol;
extern const double atol;

// profile=1: the cycle tracer (cycle_tracer.h); profile=etdump: ExecuTorch's ETDumpGen
// over a static buffer (etdump_tracer.cpp). Sized for the method; attach gives it the
// program (the .pte's flatbuffer) and the method; report prints what it recorded.
executorch::runtime::EventTracer* event_tracer();
bool attach_event_tracer(const void* pte, const char* method_name);
void report_event_tracer();

}  // namespace runner_model
