// A small ExecuTorch EventTracer (profile=1): cycles per operator, from the board's cycle
// counter, without ETDump, flatcc or a heap.
//
// The runtime, built with ET_EVENT_TRACER_ENABLED, calls start_profiling/end_profiling
// around every instruction it executes ("OPERATOR_CALL", "DELEGATE_CALL", ...) and
// around its load and execute phases ("Program::load_method", "Method::init",
// "Method::execute"). Before each instruction it sets the chain and instruction index
// (set_chain_debug_handle). attach() reads the program's own tables once (chains,
// instructions, the method's operator and delegate tables) and maps every instruction
// to a slot; an operator's slot adds up the cycles and calls of every instruction
// that calls it. All storage is static, sized by the build from the .pte
// (runner_config.h: RUNNER_PROFILE_*).
//
// print() writes one line per slot with cycles, for `scons run` to tabulate:
//   Profile op aten::convolution.out 2 412345       (kind, name, calls, cycles)
// kinds: op (the runtime's kernel call instructions of an operator, named as the program
// names it), kernel (inside those: the kernel alone, without the generated code that
// unboxes its arguments: the registration's "native_call_<op>" events), delegate (a
// delegate call, named by its backend id), instr (MOVE_CALL, FREE_CALL, JF_CALL),
// phase (a runtime or runner phase: Program::load, Program::load_method, Method::init,
// Method::execute), event (any other named event, e.g. a delegate's own).
#pragma once

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/event_tracer.h>

#include "runner_config.h"

namespace corev {

class CycleTracer final : public executorch::runtime::EventTracer {
 public:
  using EventTracerEntry = executorch::runtime::EventTracerEntry;
  using ChainID = executorch::runtime::ChainID;
  using DebugHandle = executorch::runtime::DebugHandle;
  using DelegateDebugIntId = executorch::runtime::DelegateDebugIntId;

  // Reads the instruction and operator tables of the method named method_name from
  // the program's flatbuffer (the start of the .pte). false: not found, or larger than
  // the build sized for (then every instruction is counted under "other").
  bool attach(const void* pte, const char* method_name);

  // Prints the records ("Profile ..." lines) and, when some did not fit, a warning.
  void print() const;

  void create_event_block(const char* name) override;
  EventTracerEntry start_profiling(
      const char* name,
      ChainID chain_id = executorch::runtime::kUnsetChainId,
      DebugHandle debug_handle = executorch::runtime::kUnsetDebugHandle) override;
  void end_profiling(EventTracerEntry prof_entry) override;
  EventTracerEntry start_profiling_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index) override;
  void end_profiling_delegate(
      EventTracerEntry event_tracer_entry,
      const void* metadata = nullptr,
      size_t metadata_len = 0) override;
  void log_profiling_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      et_timestamp_t start_time,
      et_timestamp_t end_time,
      const void* metadata = nullptr,
      size_t metadata_len = 0) override;
  void track_allocation(executorch::runtime::AllocatorID id, size_t size) override;
  executorch::runtime::AllocatorID track_allocator(const char* name) override;
  executorch::runtime::Result<bool> log_evalue(
      const executorch::runtime::EValue& evalue,
      executorch::runtime::LoggedEValueType evalue_type) override;
  executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const executorch::aten::Tensor& output) override;
  executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const executorch::runtime::ArrayRef<executorch::aten::Tensor> output) override;
  executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const int& output) override;
  executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const bool& output) override;
  executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const double& output) override;
  void set_delegation_intermediate_output_filter(
      executorch::runtime::EventTracerFilterBase* event_tracer_filter) override;

  // Slots: the method's operators (instructions), their kernels, the method's
  // delegates, the other instruction kinds, named events (phases and anything else).
  static constexpr size_t kMaxOperators = RUNNER_PROFILE_MAX_OPERATORS;
  static constexpr size_t kMaxDelegates = RUNNER_PROFILE_MAX_DELEGATES;
  static constexpr size_t kMaxChains = RUNNER_PROFILE_MAX_CHAINS;
  static constexpr size_t kMaxInstructions = RUNNER_PROFILE_MAX_INSTRUCTIONS;
  static constexpr size_t kMaxNamed = 12;
  static constexpr size_t kNameLength = 40;

 private:
  enum InstrKind : uint8_t { kMove, kFree, kJumpFalse, kOtherInstr, kNumInstrKinds };
  static constexpr size_t kOperatorBase = 0;
  static constexpr size_t kKernelBase = kOperatorBase + kMaxOperators;
  static constexpr size_t kDelegateBase = kKernelBase + kMaxOperators;
  static constexpr size_t kInstrBase = kDelegateBase + kMaxDelegates;
  static constexpr size_t kNamedBase = kInstrBase + kNumInstrKinds;
  static constexpr size_t kNumSlots = kNamedBase + kMaxNamed;
  static constexpr uint16_t kNoSlot = 0xffff;

  struct Record {
    uint64_t cycles;
    uint32_t calls;
  };

  uint16_t instruction_slot(ChainID chain, DebugHandle instruction) const;
  uint16_t named_slot(const char* name, bool is_phase);
  void add(uint16_t slot, uint64_t cycles);

  const void* program_ = nullptr;      // the program's flatbuffer
  int plan_index_ = -1;                // its execution plan of the method
  size_t num_operators_ = 0;
  size_t num_delegates_ = 0;
  size_t num_chains_ = 0;
  bool overflow_ = false;              // the method is larger than the build sized for
  const char* operator_call_ = nullptr;   // the runtime's "OPERATOR_CALL" literal
  // The slot of the instruction running (for the kernel events inside it).
  uint16_t current_slot_ = kNoSlot;
  const char* kernel_event_[kMaxOperators] = {};   // each operator's kernel event name
  uint16_t chain_base_[kMaxChains] = {};
  uint16_t slot_of_[kMaxInstructions] = {};
  Record records_[kNumSlots] = {};
  char names_[kMaxNamed][kNameLength] = {};
  bool named_is_phase_[kMaxNamed] = {};
  size_t num_named_ = 0;
  uint32_t dropped_ = 0;               // events without a slot
};

}  // namespace corev
