// The model's part of the executor runner (runner_model.h), compiled per model with
// the runner_config.h the build generated from its .pte.
#include "runner_model.h"

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

}  // namespace runner_model
