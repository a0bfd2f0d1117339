// The model's data for the executor runner (runner_model_data.h), compiled per model
// with the runner_config.h the build generated from its .pte. Nothing here includes the
// runtime's headers (a set of 40 models compiles this 40 times): the functions that
// need them are in runner_model_io.cpp.
#include "runner_model_data.h"

#include <cstring>

#include "runner_config.h"

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

}  // namespace runner_model
