// What the executor runner knows of its model. The runner itself is compiled once per
// variant; this is defined per model: the data (runner_model_data.h) by runner_model.cpp
// from the generated runner_config.h (pools sized from the .pte, the inputs given to the
// build); the functions below by runner_model_io.cpp, compiled once per variant for each
// combination of the two features they serve (RUNNER_UNPLANNED_IO and
// RUNNER_DYNAMIC_INPUTS, which the build defines for the model); with profile=1 the event
// tracer by cycle_tracer.cpp (its tables sized for the method), with profile=etdump by
// etdump_tracer.cpp (its buffer sized for the method). With LTO the sizes are constants
// in the runner's code as if it had included the header itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>

#include "runner_model_data.h"

namespace executorch {
namespace runtime {
class EventTracer;
}  // namespace runtime
}  // namespace executorch

namespace runner_model {

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

// profile=1: the cycle tracer (cycle_tracer.h); profile=etdump: ExecuTorch's ETDumpGen
// over a static buffer (etdump_tracer.cpp). Sized for the method; attach gives it the
// program (the .pte's flatbuffer) and the method; report prints what it recorded.
executorch::runtime::EventTracer* event_tracer();
bool attach_event_tracer(const void* pte, const char* method_name);
void report_event_tracer();

}  // namespace runner_model
