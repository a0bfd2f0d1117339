// Runs the first method of an ExecuTorch program on a bare-metal CORE-V board.
//
// The program comes from memory: linked into the image (model_placement=embedded) or
// left in the board's model region by a separate hex (model_placement=external, the
// XIP case). BufferDataLoader is header-only, so no data-loader extension is needed.
// All memory is static: the build sizes the pools from the .pte (runner_model.h: the
// runner is compiled once per variant, what it knows of its model once per model).
// Outputs are printed without printf's floating-point support.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/log.h>
#include <executorch/runtime/platform/runtime.h>

#include "board.h"
#include "corev_et.h"
#include "runner_model.h"

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::extension::BufferDataLoader;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;

#if RUNNER_MODEL_EXTERNAL
#include "model_check.h"
// The model region (linker symbols): a header, the .pte, its operators (model_check.h).
extern "C" const uint8_t __model_origin[];
extern "C" const uint8_t __model_length[];
#else
extern "C" const uint8_t model_pte[];
extern "C" const uint32_t model_pte_size;
#endif

namespace {

namespace model = runner_model;

#if RUNNER_PROFILE
// profile=1: cycles per operator and per load phase (cycle_tracer.h).
#define RUNNER_EVENT_TRACER (model::cycle_tracer())
#else
#define RUNNER_EVENT_TRACER nullptr
#endif

// ---- output printing without printf's floating point (and without 64-bit division:
// board_put_u64)

void print_i64(int64_t value) {
  if (value < 0) {
    board_putc('-');
    board_put_u64(static_cast<uint64_t>(-(value + 1)) + 1);
  } else {
    board_put_u64(static_cast<uint64_t>(value));
  }
}

// Tensors have at most this many dimensions (ExecuTorch's kTensorDimensionLimit).
constexpr size_t kMaxDims = 16;

void print_hex_digits(uint32_t value, int digits) {
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
    board_putc("0123456789abcdef"[(value >> shift) & 0xf]);
}

// A float as exact decimal digits (up to 9 significant ones, which identify it), in
// integer arithmetic only. Magnitudes that need more than 64 bits print as exact
// hexadecimal floating point (0x1.8p-70), which strtod and float.fromhex read back.
void print_float(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (bits & 0x80000000u) board_putc('-');
  bits &= 0x7fffffffu;
  const int biased = static_cast<int>(bits >> 23);
  const uint32_t fraction_bits = bits & 0x7fffffu;
  if (biased == 0xff) {
    board_puts(fraction_bits ? "nan" : "inf");
    return;
  }
  if (bits == 0) {
    board_putc('0');
    return;
  }
  // value = mantissa * 2^exponent
  const uint64_t mantissa = biased ? (fraction_bits | 0x800000u) : fraction_bits;
  const int exponent = (biased ? biased : 1) - 150;
  if (exponent >= 0 && exponent <= 39) {
    board_put_u64(mantissa << exponent);
    return;
  }
  const int k = -exponent;  // value = mantissa / 2^k
  if (exponent < 0 && k <= 60) {
    const uint64_t mask = (uint64_t{1} << k) - 1;
    const uint64_t integer = k < 64 ? (mantissa >> k) : 0;
    uint64_t fraction = mantissa & mask;
    board_put_u64(integer);
    int significant = 0;
    for (uint32_t i = static_cast<uint32_t>(integer); i; i /= 10) ++significant;  // < 2^24
    if (fraction) board_putc('.');
    while (fraction && significant < 9) {
      fraction *= 10;
      const uint32_t digit = static_cast<uint32_t>(fraction >> k);
      fraction &= mask;
      board_putc(static_cast<char>('0' + digit));
      if (digit || significant) ++significant;
    }
    return;
  }
  board_puts(biased ? "0x1." : "0x0.");
  print_hex_digits(fraction_bits << 1, 6);
  board_putc('p');
  print_i64((biased ? biased : 1) - 127);
}

const char* dtype_name(ScalarType type) {
  switch (type) {
    case ScalarType::Float: return "float32";
    case ScalarType::Double: return "float64";
    case ScalarType::Int: return "int32";
    case ScalarType::Long: return "int64";
    case ScalarType::Short: return "int16";
    case ScalarType::Char: return "int8";
    case ScalarType::Byte: return "uint8";
    case ScalarType::Bool: return "bool";
    default: return "other";
  }
}

void print_element(const Tensor& tensor, size_t i) {
  switch (tensor.scalar_type()) {
    case ScalarType::Float: print_float(tensor.const_data_ptr<float>()[i]); break;
    case ScalarType::Double: print_float(static_cast<float>(tensor.const_data_ptr<double>()[i])); break;
    case ScalarType::Int: print_i64(tensor.const_data_ptr<int32_t>()[i]); break;
    case ScalarType::Long: print_i64(tensor.const_data_ptr<int64_t>()[i]); break;
    case ScalarType::Short: print_i64(tensor.const_data_ptr<int16_t>()[i]); break;
    case ScalarType::Char: print_i64(tensor.const_data_ptr<int8_t>()[i]); break;
    case ScalarType::Byte: print_i64(tensor.const_data_ptr<uint8_t>()[i]); break;
    case ScalarType::Bool: print_i64(tensor.const_data_ptr<bool>()[i] ? 1 : 0); break;
    default: board_putc('?'); break;
  }
}

bool is_row_major(const Tensor& tensor) {
  ssize_t stride = 1;
  for (ssize_t d = tensor.dim() - 1; d >= 0; --d) {
    if (tensor.size(d) != 1 && tensor.strides()[d] != stride) return false;
    stride *= tensor.size(d);
  }
  return true;
}

// The elements of a tensor of another dim order (channels-last), in logical order.
__attribute__((noinline)) void print_strided(const Tensor& tensor) {
  size_t index[kMaxDims] = {};
  const ssize_t dims = tensor.dim();
  for (ssize_t i = 0; i < tensor.numel(); ++i) {
    if (i) board_putc(',');
    size_t offset = 0;
    for (ssize_t d = 0; d < dims; ++d) offset += index[d] * static_cast<size_t>(tensor.strides()[d]);
    print_element(tensor, offset);
    for (ssize_t d = dims - 1; d >= 0; --d) {
      if (++index[d] < static_cast<size_t>(tensor.size(d))) break;
      index[d] = 0;
    }
  }
}

// "Output 0: float32[5] 2,2,2,2,2"
void print_output(size_t index, const EValue& value) {
  board_puts("Output ");
  board_put_u64(index);
  board_puts(": ");
  if (value.isTensor()) {
    const Tensor& tensor = value.toTensor();
    board_puts(dtype_name(tensor.scalar_type()));
    board_putc('[');
    for (ssize_t d = 0; d < tensor.dim(); ++d) {
      if (d) board_putc(',');
      board_put_u64(static_cast<uint64_t>(tensor.size(d)));
    }
    board_puts("] ");
    // In logical order (row-major over the sizes), whatever the dim order in memory:
    // a channels-last output prints as its NCHW tensor, as PyTorch would give it.
    if (!is_row_major(tensor)) {
      print_strided(tensor);
    } else {
      for (ssize_t i = 0; i < tensor.numel(); ++i) {
        if (i) board_putc(',');
        print_element(tensor, static_cast<size_t>(i));
      }
    }
  } else if (value.isInt()) {
    board_puts("int ");
    print_i64(value.toInt());
  } else if (value.isDouble()) {
    board_puts("double ");
    print_float(static_cast<float>(value.toDouble()));
  } else if (value.isBool()) {
    board_puts(value.toBool() ? "bool 1" : "bool 0");
  } else {
    board_puts("?");  // a list or string output
  }
  board_putc('\n');
}

void print_cycles(const char* what, uint64_t cycles) {
  board_puts("Cycles ");
  board_puts(what);
  board_puts(": ");
  board_put_u64(cycles);
  board_putc('\n');
}

// "Error: load_method failed: 0x21: <what to do about it>". Numbers only, to keep the
// image small: `scons run` names the code from the tree's runtime/core/error.h
// (site_scons/etcorev/run/failures.py), e.g. MemoryAllocationFailed.
int fail(const char* what, Error error, const char* hint = nullptr) {
  board_puts("Error: ");
  board_puts(what);
  board_puts(" failed: 0x");
  print_hex_digits(static_cast<uint32_t>(error), 2);
  if (hint != nullptr) {
    board_puts(": ");
    board_puts(hint);
  }
  board_putc('\n');
  return 1;
}

// Inputs: the method's planned input tensors are filled in place, with all ones or
// with the values given to the build (runner_model.h).
template <typename T>
void fill_ones(void* data, size_t count) {
  T* typed = static_cast<T*>(data);
  for (size_t i = 0; i < count; ++i) typed[i] = static_cast<T>(1);
}

Error prepare_inputs(Method& method) {
  for (size_t i = 0; i < method.inputs_size(); ++i) {
    const EValue& input = method.get_input(i);
    if (!input.isTensor()) continue;
    const Tensor& tensor = input.toTensor();
    void* data = tensor.mutable_data_ptr();
    if (data == nullptr) {
      board_puts("Error: input not memory-planned\n");
      return Error::InvalidArgument;
    }
    if (i < model::num_inputs) {
      if (model::inputs[i].size != tensor.nbytes()) {
        board_puts("Error: input size\n");  // the build checked them: a new model?
        return Error::InvalidArgument;
      }
      std::memcpy(data, model::inputs[i].data, model::inputs[i].size);
      continue;
    }
    const size_t count = static_cast<size_t>(tensor.numel());
    switch (tensor.scalar_type()) {
      case ScalarType::Float: fill_ones<float>(data, count); break;
      case ScalarType::Double: fill_ones<double>(data, count); break;
      case ScalarType::Int: fill_ones<int32_t>(data, count); break;
      case ScalarType::Long: fill_ones<int64_t>(data, count); break;
      case ScalarType::Short: fill_ones<int16_t>(data, count); break;
      case ScalarType::Char: fill_ones<int8_t>(data, count); break;
      case ScalarType::Byte: fill_ones<uint8_t>(data, count); break;
      case ScalarType::Bool: fill_ones<bool>(data, count); break;
      default:
        board_puts("Error: unsupported input dtype\n");
        return Error::NotSupported;
    }
  }
  return Error::Ok;
}

}  // namespace

int corev_et_run() {
  // mcycle counts from the start of crt0 (it clears mcountinhibit).
  print_cycles("startup", board_cycles());
  executorch::runtime::runtime_init();

  for (size_t i = 0; i < executorch::runtime::get_num_registered_backends(); ++i) {
    Result<const char*> name = executorch::runtime::get_backend_name(i);
    board_puts("Backend: ");
    board_puts(name.ok() ? *name : "?");
    board_putc('\n');
  }

#if RUNNER_MODEL_EXTERNAL
  // Not the model this firmware was built for, or a damaged one: refused by number
  // ("Model check failed: 0x03"; `scons run` names it, failures.py).
  uint64_t check_start = board_cycles();
  const model_check::Result check = model_check::check_region(
      __model_origin, reinterpret_cast<uintptr_t>(__model_length));
  if (check.status != model_check::Status::kOk) {
    board_puts("Model check failed: 0x");
    print_hex_digits(static_cast<uint32_t>(check.status), 2);
    if (check.status == model_check::Status::kOperatorMissing) {
      board_puts(" operator ");
      board_put_u64(check.operator_index);
    }
    board_putc('\n');
    return 2;
  }
  print_cycles("model check", board_cycles() - check_start);
  const uint8_t* const model_data = check.pte;
  BufferDataLoader loader(model_data, check.pte_size);
#else
  const uint8_t* const model_data = model_pte;
  BufferDataLoader loader(model_data, model_pte_size);
#endif

#if RUNNER_PROFILE
  // Program::load takes no event tracer: the runner times it as a phase of its own.
  auto load_event = model::cycle_tracer()->start_profiling("Program::load");
#endif
  uint64_t start = board_cycles();
  Result<Program> program = Program::load(&loader, RUNNER_VERIFICATION);
#if RUNNER_PROFILE
  model::cycle_tracer()->end_profiling(load_event);
#endif
  if (!program.ok()) {
    return fail("Program::load", program.error(),
                program.error() == Error::InvalidProgram ? "the model is corrupt" : nullptr);
  }
  print_cycles("program load", board_cycles() - start);

  Result<const char*> method_name = program->get_method_name(0);
  if (!method_name.ok()) return fail("get_method_name", method_name.error());
#if RUNNER_PROFILE
  if (!model::attach_cycle_tracer(model_data, *method_name)) {
    board_puts("Profile warning: the method's tables are larger than the build sized for\n");
  }
#endif
  Result<MethodMeta> meta = program->method_meta(*method_name);
  if (!meta.ok()) return fail("method_meta", meta.error());

  // Planned buffers are carved out of one static pool, each 16-byte aligned.
  const size_t num_planned = meta->num_memory_planned_buffers();
  if (num_planned > model::max_planned_buffers) {
    board_puts("Error: more planned buffers than the build sized\n");
    return 1;
  }
  size_t offset = 0;
  for (size_t i = 0; i < num_planned; ++i) {
    const size_t size = static_cast<size_t>(meta->memory_planned_buffer_size(i).get());
    if (offset + size > model::planned_pool_size) {
      board_puts("Error: planned buffers exceed the pool\n");
      return 1;
    }
    model::planned_spans[i] = Span<uint8_t>(model::planned_pool + offset, size);
    offset += (size + 15) & ~static_cast<size_t>(15);
  }
  MemoryAllocator method_allocator(model::method_pool_size, model::method_pool);
  MemoryAllocator temp_allocator(model::temp_pool_size, model::temp_pool);
  HierarchicalAllocator planned_memory({model::planned_spans, num_planned});
  MemoryManager memory_manager(&method_allocator, &planned_memory, &temp_allocator);

  start = board_cycles();
  Result<Method> method = program->load_method(*method_name, &memory_manager, RUNNER_EVENT_TRACER);
  if (!method.ok()) {
    return fail("load_method", method.error(),
                method.error() == Error::MemoryAllocationFailed
                    ? "method pool too small: raise method_pool=" : nullptr);
  }
  print_cycles("method load", board_cycles() - start);

  for (int run = 0; run < model::num_executions; ++run) {
    Error status = prepare_inputs(*method);
    if (status != Error::Ok) return fail("preparing inputs", status);
    start = board_cycles();
    status = method->execute();
    if (status != Error::Ok) return fail("execute", status);
    print_cycles("execute", board_cycles() - start);
    temp_allocator.reset();
  }
#if RUNNER_PROFILE
  model::print_cycle_tracer();
#endif

  // A method that gives nothing is a failure, not a silent success.
  if (method->outputs_size() == 0 || method->outputs_size() != model::num_outputs) {
    return fail("reading outputs", Error::InvalidProgram,
                "outputs differ from the model's");
  }
  start = board_cycles();
  for (size_t i = 0; i < method->outputs_size(); ++i) print_output(i, method->get_output(i));
  print_cycles("output", board_cycles() - start);
  return 0;
}
