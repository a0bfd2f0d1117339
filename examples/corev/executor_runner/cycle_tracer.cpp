// The cycle tracer of profile=1 (cycle_tracer.h says what it records and prints).
#include "cycle_tracer.h"

#include <cstring>

#include <executorch/schema/program_generated.h>

#include "board.h"

namespace corev {

using executorch::runtime::AllocatorID;
using executorch::runtime::ArrayRef;
using executorch::runtime::EValue;
using executorch::runtime::EventTracerEntry;
using executorch::runtime::EventTracerFilterBase;
using executorch::runtime::kUnsetChainId;
using executorch::runtime::kUnsetDebugHandle;
using executorch::runtime::LoggedEValueType;
using executorch::runtime::Result;

namespace {

// Names go on one line each as a single word: blanks become '_'.
void put_name(const char* name) {
  for (; *name; ++name) board_putc(*name == ' ' || *name == '\n' ? '_' : *name);
}

void put_record(const char* kind, const char* name, const char* suffix, uint32_t calls,
                uint64_t cycles) {
  board_puts("Profile ");
  board_puts(kind);
  board_putc(' ');
  put_name(name);
  if (suffix != nullptr && *suffix != '\0') {
    board_putc('.');
    put_name(suffix);
  }
  board_putc(' ');
  board_put_u64(calls);
  board_putc(' ');
  board_put_u64(cycles);
  board_putc('\n');
}

const executorch_flatbuffer::ExecutionPlan* find_plan(const void* program, int index) {
  if (program == nullptr || index < 0) return nullptr;
  return executorch_flatbuffer::GetProgram(program)->execution_plan()->Get(
      static_cast<flatbuffers::uoffset_t>(index));
}

const char* const kInstrNames[] = {"MOVE_CALL", "FREE_CALL", "JF_CALL", "other"};
// The names method.cpp profiles instructions under, besides "OPERATOR_CALL".
const char* const kInstructionEvents[] = {"DELEGATE_CALL", "MOVE_CALL", "FREE_CALL", "JF_CALL"};

}  // namespace

bool CycleTracer::attach(const void* pte, const char* method_name) {
  const auto* program = executorch_flatbuffer::GetProgram(pte);
  const auto* plans = program->execution_plan();
  for (flatbuffers::uoffset_t p = 0; plans != nullptr && p < plans->size(); ++p) {
    const auto* plan = plans->Get(p);
    if (plan->name() == nullptr || std::strcmp(plan->name()->c_str(), method_name) != 0)
      continue;
    program_ = pte;
    plan_index_ = static_cast<int>(p);
    num_operators_ = plan->operators() ? plan->operators()->size() : 0;
    num_delegates_ = plan->delegates() ? plan->delegates()->size() : 0;
    num_chains_ = plan->chains() ? plan->chains()->size() : 0;
    overflow_ = num_operators_ > kMaxOperators || num_delegates_ > kMaxDelegates ||
                num_chains_ > kMaxChains;
    size_t next = 0;
    for (size_t c = 0; c < num_chains_ && !overflow_; ++c) {
      chain_base_[c] = static_cast<uint16_t>(next);
      const auto* instructions = plan->chains()->Get(c)->instructions();
      const size_t count = instructions ? instructions->size() : 0;
      if (next + count > kMaxInstructions) {
        overflow_ = true;
        break;
      }
      for (size_t i = 0; i < count; ++i) {
        const auto* instruction = instructions->Get(i);
        uint16_t slot = kInstrBase + kOtherInstr;
        switch (instruction->instr_args_type()) {
          case executorch_flatbuffer::InstructionArguments::KernelCall:
            slot = kOperatorBase + instruction->instr_args_as_KernelCall()->op_index();
            break;
          case executorch_flatbuffer::InstructionArguments::DelegateCall:
            slot = kDelegateBase + instruction->instr_args_as_DelegateCall()->delegate_index();
            break;
          case executorch_flatbuffer::InstructionArguments::MoveCall:
            slot = kInstrBase + kMove;
            break;
          case executorch_flatbuffer::InstructionArguments::FreeCall:
            slot = kInstrBase + kFree;
            break;
          case executorch_flatbuffer::InstructionArguments::JumpFalseCall:
            slot = kInstrBase + kJumpFalse;
            break;
          default:
            break;
        }
        slot_of_[next + i] = slot;
      }
      next += count;
    }
    return !overflow_;
  }
  return false;
}

uint16_t CycleTracer::instruction_slot(ChainID chain, DebugHandle instruction) const {
  if (overflow_ || program_ == nullptr) return kInstrBase + kOtherInstr;
  if (chain == kUnsetChainId) chain = chain_id_;
  if (instruction == kUnsetDebugHandle) instruction = debug_handle_;
  if (chain < 0 || static_cast<size_t>(chain) >= num_chains_) return kInstrBase + kOtherInstr;
  const size_t index = chain_base_[chain] + instruction;
  return index < kMaxInstructions ? slot_of_[index] : kInstrBase + kOtherInstr;
}

uint16_t CycleTracer::named_slot(const char* name, bool is_phase) {
  if (name == nullptr) name = "(unnamed)";
  for (size_t i = 0; i < num_named_; ++i) {
    if (std::strncmp(names_[i], name, kNameLength - 1) == 0) return kNamedBase + i;
  }
  if (num_named_ == kMaxNamed) return kNoSlot;
  std::strncpy(names_[num_named_], name, kNameLength - 1);
  named_is_phase_[num_named_] = is_phase;
  return kNamedBase + num_named_++;
}

void CycleTracer::add(uint16_t slot, uint64_t cycles) {
  if (slot >= kNumSlots) {
    ++dropped_;
    return;
  }
  records_[slot].cycles += cycles;
  ++records_[slot].calls;
}

void CycleTracer::create_event_block(const char* name) {
  (void)name;
}

EventTracerEntry CycleTracer::start_profiling(const char* name, ChainID chain_id,
                                              DebugHandle debug_handle) {
  EventTracerEntry entry;
  entry.chain_id = chain_id == kUnsetChainId ? chain_id_ : chain_id;
  entry.debug_handle = debug_handle == kUnsetDebugHandle ? debug_handle_ : debug_handle;
  entry.delegate_event_id_type = executorch::runtime::DelegateDebugIdType::kNone;
  // The runtime passes the same literal for every kernel call: one compare after the
  // first. Instruction kinds are told apart by the program's own tables; a kernel's
  // event (the registration's "native_call_<op>") belongs to the instruction around it.
  if (name != nullptr && name == operator_call_) {
    entry.event_id = current_slot_ = instruction_slot(entry.chain_id, entry.debug_handle);
  } else if (current_slot_ < kKernelBase && name != nullptr &&
             (name == kernel_event_[current_slot_] ||
              std::strncmp(name, "native_call_", 12) == 0)) {
    kernel_event_[current_slot_] = name;   // the next call of this kernel: one compare
    entry.event_id = current_slot_ + kMaxOperators;
  } else if (name != nullptr && std::strcmp(name, "OPERATOR_CALL") == 0) {
    operator_call_ = name;
    entry.event_id = current_slot_ = instruction_slot(entry.chain_id, entry.debug_handle);
  } else {
    bool instruction = false;
    for (const char* kind : kInstructionEvents) {
      if (name != nullptr && std::strcmp(name, kind) == 0) instruction = true;
    }
    entry.event_id = instruction ? current_slot_ = instruction_slot(entry.chain_id,
                                                                    entry.debug_handle)
                                 : named_slot(name, true);
  }
  entry.start_time = board_cycles();   // last: the event's own cycles start here
  return entry;
}

void CycleTracer::end_profiling(EventTracerEntry prof_entry) {
  const uint64_t now = board_cycles();   // first
  add(static_cast<uint16_t>(prof_entry.event_id), now - prof_entry.start_time);
}

EventTracerEntry CycleTracer::start_profiling_delegate(const char* name,
                                                       DelegateDebugIntId delegate_debug_index) {
  (void)delegate_debug_index;
  EventTracerEntry entry;
  entry.event_id = named_slot(name ? name : "delegate event", false);
  entry.chain_id = chain_id_;
  entry.debug_handle = debug_handle_;
  entry.delegate_event_id_type = executorch::runtime::DelegateDebugIdType::kInt;
  entry.start_time = board_cycles();
  return entry;
}

void CycleTracer::end_profiling_delegate(EventTracerEntry event_tracer_entry,
                                         const void* metadata, size_t metadata_len) {
  const uint64_t now = board_cycles();
  (void)metadata;
  (void)metadata_len;
  add(static_cast<uint16_t>(event_tracer_entry.event_id), now - event_tracer_entry.start_time);
}

void CycleTracer::log_profiling_delegate(const char* name, DelegateDebugIntId delegate_debug_index,
                                         et_timestamp_t start_time, et_timestamp_t end_time,
                                         const void* metadata, size_t metadata_len) {
  (void)delegate_debug_index;
  (void)metadata;
  (void)metadata_len;
  add(named_slot(name ? name : "delegate event", false), end_time - start_time);
}

void CycleTracer::track_allocation(AllocatorID id, size_t size) {
  (void)id;
  (void)size;
}

AllocatorID CycleTracer::track_allocator(const char* name) {
  (void)name;
  return 0;
}

Result<bool> CycleTracer::log_evalue(const EValue& evalue, LoggedEValueType evalue_type) {
  (void)evalue;
  (void)evalue_type;
  return false;
}

Result<bool> CycleTracer::log_intermediate_output_delegate(const char*, DelegateDebugIntId,
                                                           const executorch::aten::Tensor&) {
  return false;
}

Result<bool> CycleTracer::log_intermediate_output_delegate(
    const char*, DelegateDebugIntId, const ArrayRef<executorch::aten::Tensor>) {
  return false;
}

Result<bool> CycleTracer::log_intermediate_output_delegate(const char*, DelegateDebugIntId,
                                                           const int&) {
  return false;
}

Result<bool> CycleTracer::log_intermediate_output_delegate(const char*, DelegateDebugIntId,
                                                           const bool&) {
  return false;
}

Result<bool> CycleTracer::log_intermediate_output_delegate(const char*, DelegateDebugIntId,
                                                           const double&) {
  return false;
}

void CycleTracer::set_delegation_intermediate_output_filter(EventTracerFilterBase* filter) {
  (void)filter;
}

void CycleTracer::print() const {
  const auto* plan = find_plan(program_, plan_index_);
  for (size_t base : {kOperatorBase, kKernelBase}) {
    for (size_t i = 0; i < kMaxOperators; ++i) {
      const Record& r = records_[base + i];
      if (r.calls == 0) continue;
      const auto* op = plan && plan->operators() && i < plan->operators()->size()
                           ? plan->operators()->Get(i) : nullptr;
      put_record(base == kOperatorBase ? "op" : "kernel",
                 op && op->name() ? op->name()->c_str() : "(unknown)",
                 op && op->overload() ? op->overload()->c_str() : nullptr, r.calls, r.cycles);
    }
  }
  for (size_t i = 0; i < kMaxDelegates; ++i) {
    const Record& r = records_[kDelegateBase + i];
    if (r.calls == 0) continue;
    const auto* delegate = plan && plan->delegates() && i < plan->delegates()->size()
                               ? plan->delegates()->Get(i) : nullptr;
    put_record("delegate", delegate && delegate->id() ? delegate->id()->c_str() : "(unknown)",
               nullptr, r.calls, r.cycles);
  }
  for (size_t i = 0; i < kNumInstrKinds; ++i) {
    const Record& r = records_[kInstrBase + i];
    if (r.calls) put_record("instr", kInstrNames[i], nullptr, r.calls, r.cycles);
  }
  for (size_t i = 0; i < num_named_; ++i) {
    const Record& r = records_[kNamedBase + i];
    if (r.calls) put_record(named_is_phase_[i] ? "phase" : "event", names_[i], nullptr,
                            r.calls, r.cycles);
  }
  if (overflow_ || dropped_) {
    board_puts("Profile warning: ");
    board_puts(overflow_ ? "the method is larger than the build sized the profile for; "
                           "instructions are counted as 'other'"
                         : "events without a slot were not counted");
    board_putc('\n');
  }
}

}  // namespace corev

// The runner's view of it (runner_model.h): the tracer's tables are sized for the model.
namespace runner_model {
namespace {
corev::CycleTracer tracer;
}  // namespace
executorch::runtime::EventTracer* event_tracer() { return &tracer; }
bool attach_event_tracer(const void* pte, const char* method_name) {
  return tracer.attach(pte, method_name);
}
void report_event_tracer() { tracer.print(); }
}  // namespace runner_model
