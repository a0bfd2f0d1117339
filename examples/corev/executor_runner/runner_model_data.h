// What the executor runner knows of its model that is data: the pools, the values given
// to the build, the mutable state to clear. runner_model.cpp defines it per model from
// the generated runner_config.h; it includes no more of ExecuTorch than Span, so that
// compiling it for each model of a set costs little (runner_model.h, whose functions
// need the runtime's headers, includes it; runner_model_io.cpp defines those once per
// variant).
#pragma once

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/span.h>

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

// Zeroes the planned memory of the method's mutable buffers (and what else a kernel reads
// before any writes it), which ExecuTorch's runners start from zeroed memory.
void clear_state(const executorch::runtime::Span<uint8_t>* spans);

// A bundled program (.bpte): the tolerances its test cases are checked with (rtol=,
// atol=; floats only, other dtypes compare exactly).
extern const double rtol;
extern const double atol;

}  // namespace runner_model
