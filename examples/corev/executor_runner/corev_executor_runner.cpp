// Runs the first method of an ExecuTorch program on a bare-metal CORE-V board.
//
// The program comes from memory: linked into the image (model_placement=embedded) or
// left in the board's model region by a separate hex (model_placement=external, the
// XIP case). BufferDataLoader is header-only, so no data-loader extension is needed.
// All memory is static: the build sizes the pools from the .pte (runner_model.h: the
// runner is compiled once per variant, what it knows of its model once per model).
// Outputs are printed without printf's floating-point support.
//
// RUNNER_BUNDLED (a .bpte model; the build compiles this file a second time for it):
// the model is an ExecuTorch bundled program. The program comes out of it
// (get_program_data), every test case of the method's suite is loaded
// (load_bundled_input), run and checked here against its expected outputs at the
// build's rtol/atol, one line per test case:
//   Test case 0: PASS max |diff| 0.0000000298023224 at output 0 index 4
//   Test case 1: FAIL output 0 index 3: expected 0.5, got -0.5 (max |diff| 1 at ...)
// and the exit status is 1 when one failed.
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

#if RUNNER_BUNDLED
#include <cmath>

#include <executorch/devtools/bundled_program/bundled_program.h>
#include <executorch/devtools/bundled_program/schema/bundled_program_schema_generated.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#endif

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
// profile=1: cycles per operator and per load phase (cycle_tracer.h); profile=etdump
// (RUNNER_PROFILE 2): ExecuTorch's ETDumpGen (etdump_tracer.cpp).
#define RUNNER_EVENT_TRACER (model::event_tracer())
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

// The digits of fraction / 2^k (mask = 2^k - 1) until it is exhausted or 9 significant
// digits, counting those already printed, are out.
template <typename Word>
void print_fraction_digits(Word fraction, Word mask, int k, int significant) {
  while (fraction && significant < 9) {
    fraction *= 10;
    const uint32_t digit = static_cast<uint32_t>(fraction >> k);
    fraction &= mask;
    board_putc(static_cast<char>('0' + digit));
    if (digit || significant) ++significant;
  }
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
    // fraction * 10 < 2^32 for k <= 28: the same digits in 32-bit arithmetic (on RV32 a
    // 64-bit multiply, shift and mask cost about four times as much, for every digit
    // of every output value)
    if (k <= 28) {
      print_fraction_digits(static_cast<uint32_t>(fraction), static_cast<uint32_t>(mask), k,
                            significant);
    } else {
      print_fraction_digits(fraction, mask, k, significant);
    }
    return;
  }
  board_puts(biased ? "0x1." : "0x0.");
  print_hex_digits(fraction_bits << 1, 6);
  board_putc('p');
  print_i64((biased ? biased : 1) - 127);
}

#if !RUNNER_BUNDLED
// The float a float16 (IEEE half) or bfloat16 element stands for, from its bits alone
// (exact: every such value is a float).
float half_as_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits = sign;
  if (exponent == 0x1fu) {
    bits |= 0x7f800000u | mantissa << 13;               // infinity, NaN
  } else if (exponent != 0) {
    bits |= (exponent + 112) << 23 | mantissa << 13;    // rebias 15 -> 127
  } else if (mantissa != 0) {                           // subnormal: normalise
    exponent = 113;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      --exponent;
    }
    bits |= exponent << 23 | (mantissa & 0x3ffu) << 13;
  }
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

float bfloat16_as_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Out of line: print_element is inlined twice, and these dtypes are rare on the target.
__attribute__((noinline)) void print_16bit_float(uint16_t bits, bool brain) {
  print_float(brain ? bfloat16_as_float(bits) : half_as_float(bits));
}

// Outputs are printed (a bundled program's are checked on the target instead).
const char* dtype_name(ScalarType type) {
  switch (type) {
    case ScalarType::Float: return "float32";
    case ScalarType::Double: return "float64";
    case ScalarType::Half: return "float16";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::Int: return "int32";
    case ScalarType::Long: return "int64";
    case ScalarType::Short: return "int16";
    case ScalarType::Char: return "int8";
    case ScalarType::Byte: return "uint8";
    case ScalarType::Bool: return "bool";
    default: return "other";
  }
}

inline __attribute__((always_inline)) void print_element(const Tensor& tensor, size_t i) {
  switch (tensor.scalar_type()) {
    case ScalarType::Float: print_float(tensor.const_data_ptr<float>()[i]); break;
    case ScalarType::Double: print_float(static_cast<float>(tensor.const_data_ptr<double>()[i])); break;
    case ScalarType::Half:
    case ScalarType::BFloat16:
      print_16bit_float(static_cast<const uint16_t*>(tensor.const_data_ptr())[i],
                        tensor.scalar_type() == ScalarType::BFloat16);
      break;
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
#endif  // !RUNNER_BUNDLED

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

#if !RUNNER_BUNDLED
// Inputs: the method's planned input tensors are filled in place, with all ones or
// with the values given to the build (runner_model.h).
template <typename T>
void fill_ones(void* data, size_t count, T one = static_cast<T>(1)) {
  T* typed = static_cast<T*>(data);
  for (size_t i = 0; i < count; ++i) typed[i] = one;
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
      const Error resized = model::resize_input(tensor, i);
      if (resized != Error::Ok) {
        board_puts("Error: input shape\n");  // the build checked them: a new model?
        return resized;
      }
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
      case ScalarType::Half: fill_ones<uint16_t>(data, count, 0x3c00); break;      // 1.0
      case ScalarType::BFloat16: fill_ones<uint16_t>(data, count, 0x3f80); break;  // 1.0
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
#endif  // !RUNNER_BUNDLED

#if RUNNER_BUNDLED
// ---- a bundled program's test cases, checked on the target. ExecuTorch's own
// verify_method_outputs says only whether they match, and compute_method_output_error_
// stats reads every output as float (wrong for other dtypes, past the end of an int8
// one): the worst difference is found here, per dtype. Floats match within
// atol + rtol * |expected| (NaN matches NaN, an infinity the same infinity); other
// dtypes exactly.

namespace bundle_fb = bundled_program_flatbuffer;

const bundle_fb::BundledMethodTestSuite* test_suite(const void* bundle, const char* method) {
  const auto* suites = bundle_fb::GetBundledProgram(bundle)->method_test_suites();
  for (flatbuffers::uoffset_t i = 0; suites != nullptr && i < suites->size(); ++i) {
    const auto* suite = suites->Get(i);
    if (suite->method_name() != nullptr && std::strcmp(suite->method_name()->c_str(), method) == 0)
      return suite;
  }
  return nullptr;
}

// One element, as a double for the floating-point dtypes and as an integer otherwise.
struct Element {
  bool is_float;
  double f;
  int64_t i;
};

bool is_checked_dtype(ScalarType type) {
  switch (type) {
    case ScalarType::Float: case ScalarType::Double: case ScalarType::Half:
    case ScalarType::BFloat16: case ScalarType::Int: case ScalarType::Long:
    case ScalarType::Short: case ScalarType::Char: case ScalarType::Byte:
    case ScalarType::Bool:
      return true;
    default:
      return false;
  }
}

Element element_at(const void* data, ScalarType type, size_t offset) {
  switch (type) {
    case ScalarType::Float: return {true, static_cast<const float*>(data)[offset], 0};
    case ScalarType::Double: return {true, static_cast<const double*>(data)[offset], 0};
    case ScalarType::Half:
      return {true, static_cast<float>(static_cast<const executorch::aten::Half*>(data)[offset]), 0};
    case ScalarType::BFloat16:
      return {true,
              static_cast<float>(static_cast<const executorch::aten::BFloat16*>(data)[offset]), 0};
    case ScalarType::Int: return {false, 0, static_cast<const int32_t*>(data)[offset]};
    case ScalarType::Long: return {false, 0, static_cast<const int64_t*>(data)[offset]};
    case ScalarType::Short: return {false, 0, static_cast<const int16_t*>(data)[offset]};
    case ScalarType::Char: return {false, 0, static_cast<const int8_t*>(data)[offset]};
    case ScalarType::Byte: return {false, 0, static_cast<const uint8_t*>(data)[offset]};
    default: return {false, 0, static_cast<const uint8_t*>(data)[offset] ? 1 : 0};  // Bool
  }
}

void print_element_value(const Element& e) {
  if (e.is_float) {
    print_float(static_cast<float>(e.f));
  } else {
    print_i64(e.i);
  }
}

// How one test case went: the first element out of tolerance, the worst difference.
struct Check {
  bool failed = false;
  const char* problem = nullptr;   // a mismatch that is not about values
  size_t output = 0, index = 0;    // the first element out of tolerance
  Element expected{}, got{};
  double worst = 0;                // the largest |got - expected|
  bool worst_is_float = false;
  size_t worst_output = 0, worst_index = 0;
};

// Compares one output with its expected tensor, element by element in logical order
// (each side may have its own dim order).
void check_output(const Tensor& got, const bundle_fb::Tensor& want, size_t output, double rtol,
                  double atol, Check& check) {
  const auto type = static_cast<ScalarType>(want.scalar_type());
  const auto* sizes = want.sizes();
  const auto* dim_order = want.dim_order();
  const size_t dims = sizes ? sizes->size() : 0;
  bool same_shape = got.scalar_type() == type && static_cast<size_t>(got.dim()) == dims &&
                    dims <= kMaxDims && dim_order && dim_order->size() == dims;
  for (size_t d = 0; same_shape && d < dims; ++d)
    same_shape = got.size(static_cast<ssize_t>(d)) == sizes->Get(static_cast<flatbuffers::uoffset_t>(d));
  if (!same_shape || !is_checked_dtype(type)) {
    if (!check.failed) {
      check.failed = true;
      check.output = output;
      check.problem = !same_shape ? "dtype or shape differs from the expected one"
                                  : "dtype that cannot be checked";
    }
    return;
  }
  // The expected tensor's strides from its dim order (dim_order[0] outermost).
  size_t want_strides[kMaxDims] = {};
  size_t stride = 1;
  for (size_t k = dims; k-- > 0;) {
    const size_t d = dim_order->Get(static_cast<flatbuffers::uoffset_t>(k));
    if (d >= dims) {
      if (!check.failed) {
        check.failed = true;
        check.output = output;
        check.problem = "expected tensor has a bad dim order";
      }
      return;
    }
    want_strides[d] = stride;
    stride *= static_cast<size_t>(sizes->Get(static_cast<flatbuffers::uoffset_t>(d)));
  }
  const size_t numel = static_cast<size_t>(got.numel());
  if (want.data() == nullptr ||
      want.data()->size() < numel * executorch::runtime::elementSize(type)) {
    if (!check.failed) {
      check.failed = true;
      check.output = output;
      check.problem = "expected tensor has too little data";
    }
    return;
  }
  size_t index[kMaxDims] = {};
  for (size_t i = 0; i < numel; ++i) {
    size_t got_offset = 0, want_offset = 0;
    for (size_t d = 0; d < dims; ++d) {
      got_offset += index[d] * static_cast<size_t>(got.strides()[d]);
      want_offset += index[d] * want_strides[d];
    }
    const Element g = element_at(got.const_data_ptr(), type, got_offset);
    const Element w = element_at(want.data()->data(), type, want_offset);
    double diff;
    bool close;
    if (g.is_float) {
      const bool both_nan = std::isnan(g.f) && std::isnan(w.f);
      const bool same_inf = std::isinf(g.f) && std::isinf(w.f) && ((g.f > 0) == (w.f > 0));
      diff = both_nan || same_inf ? 0.0 : std::fabs(g.f - w.f);
      // (for an expected infinity the bound is infinite: only the same infinity matches)
      close = both_nan || same_inf || (std::isfinite(w.f) && diff <= atol + rtol * std::fabs(w.f));
      if (std::isnan(diff)) diff = INFINITY;
    } else {
      diff = g.i > w.i ? static_cast<double>(g.i - w.i) : static_cast<double>(w.i - g.i);
      close = g.i == w.i;
    }
    if (diff > check.worst || (i == 0 && output == 0)) {
      if (diff > check.worst) check.worst = diff;
      check.worst_is_float = g.is_float;
      check.worst_output = output;
      check.worst_index = i;
    }
    if (!close && !check.failed) {
      check.failed = true;
      check.output = output;
      check.index = i;
      check.expected = w;
      check.got = g;
    }
    for (size_t d = dims; d-- > 0;) {
      if (++index[d] < static_cast<size_t>(sizes->Get(static_cast<flatbuffers::uoffset_t>(d))))
        break;
      index[d] = 0;
    }
  }
}

void print_worst(const Check& check) {
  board_puts("max |diff| ");
  if (check.worst_is_float) {
    print_float(static_cast<float>(check.worst));
  } else {
    board_put_u64(static_cast<uint64_t>(check.worst));
  }
  board_puts(" at output ");
  board_put_u64(check.worst_output);
  board_puts(" index ");
  board_put_u64(check.worst_index);
}

// For an input the program does not plan, load_bundled_input (Method::set_input) points
// the tensor at the test case's data inside the bundled program, which may be read-only
// (an external model in flash) and which relayout_bundled_inputs would rearrange in
// place: the data is copied into the input's own buffer (give_unplanned_io_memory).
Error copy_shared_inputs(Method& method, void* const* own) {
  for (size_t i = 0; own != nullptr && i < method.inputs_size(); ++i) {
    if (own[i] == nullptr) continue;
    const Tensor& tensor = method.get_input(i).toTensor();
    if (tensor.const_data_ptr() == own[i]) continue;
    std::memcpy(own[i], tensor.const_data_ptr(), tensor.nbytes());
    const Error set = executorch::runtime::internal::set_tensor_data(tensor, own[i],
                                                                     tensor.nbytes());
    if (set != Error::Ok) return set;
  }
  return Error::Ok;
}

// ExecuTorch's load_bundled_input hands each input tensor to Method::set_input, which
// copies its bytes as they are. BundledProgram stores a tensor in its logical
// (contiguous) order, so a method input of another dim order (the channels-last input of
// an int8 network for the Cortex-M operators) would get its values scrambled: such an
// input is copied again here, element by element in logical order, into the layout of
// the method's input tensor.
Error relayout_bundled_inputs(Method& method, const bundle_fb::BundledMethodTestCase* test_case) {
  const auto* inputs = test_case->inputs();
  for (size_t i = 0; inputs != nullptr && i < inputs->size() && i < method.inputs_size(); ++i) {
    const auto* given = inputs->Get(static_cast<flatbuffers::uoffset_t>(i))->val_as_Tensor();
    const EValue& input = method.get_input(i);
    if (given == nullptr || !input.isTensor()) continue;
    const Tensor& tensor = input.toTensor();
    const auto* dim_order = given->dim_order();
    const size_t dims = static_cast<size_t>(tensor.dim());
    if (dim_order == nullptr || dim_order->size() != dims || dims > kMaxDims) {
      return Error::InvalidArgument;
    }
    bool same = true;
    for (size_t k = 0; k < dims; ++k)
      same = same && dim_order->Get(static_cast<flatbuffers::uoffset_t>(k)) == tensor.dim_order()[k];
    if (same) continue;   // set_input's copy was right
    // The given tensor's strides from its dim order, outermost first.
    size_t given_strides[kMaxDims] = {};
    size_t stride = 1;
    for (size_t k = dims; k-- > 0;) {
      const size_t d = dim_order->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (d >= dims) return Error::InvalidArgument;
      given_strides[d] = stride;
      stride *= static_cast<size_t>(tensor.size(static_cast<ssize_t>(d)));
    }
    const size_t element = executorch::runtime::elementSize(tensor.scalar_type());
    const uint8_t* from = given->data()->data();
    uint8_t* to = static_cast<uint8_t*>(tensor.mutable_data_ptr());
    size_t index[kMaxDims] = {};
    for (size_t n = 0, count = static_cast<size_t>(tensor.numel()); n < count; ++n) {
      size_t src = 0, dst = 0;
      for (size_t d = 0; d < dims; ++d) {
        src += index[d] * given_strides[d];
        dst += index[d] * static_cast<size_t>(tensor.strides()[d]);
      }
      std::memcpy(to + dst * element, from + src * element, element);
      for (size_t d = dims; d-- > 0;) {
        if (++index[d] < static_cast<size_t>(tensor.size(static_cast<ssize_t>(d)))) break;
        index[d] = 0;
      }
    }
  }
  return Error::Ok;
}

// "Test case 0: PASS max |diff| ...", or FAIL naming the first output and index out of
// tolerance; returns whether the method's outputs match test case `index`.
bool check_test_case(Method& method, const bundle_fb::BundledMethodTestCase* test_case,
                     size_t index) {
  board_puts("Test case ");
  board_put_u64(index);
  board_puts(": ");
  const auto* expected = test_case->expected_outputs();
  if (expected == nullptr || expected->size() == 0) {
    board_puts("no expected outputs\n");   // a case for profiling only
    return true;
  }
  Check check;
  if (expected->size() != method.outputs_size()) {
    check.failed = true;
    check.problem = "the number of outputs differs from the expected one";
  }
  for (size_t o = 0; o < method.outputs_size() && !check.problem; ++o) {
    const EValue& value = method.get_output(o);
    const auto* want = expected->Get(static_cast<flatbuffers::uoffset_t>(o))->val_as_Tensor();
    if (!value.isTensor() || want == nullptr) {
      check.failed = true;
      check.output = o;
      check.problem = "not a tensor";
      break;
    }
    check_output(value.toTensor(), *want, o, model::rtol, model::atol, check);
  }
  if (!check.failed) {
    board_puts("PASS ");
    print_worst(check);
    board_putc('\n');
    return true;
  }
  board_puts("FAIL output ");
  board_put_u64(check.output);
  if (check.problem != nullptr) {
    board_puts(": ");
    board_puts(check.problem);
    board_putc('\n');
    return false;
  }
  board_puts(" index ");
  board_put_u64(check.index);
  board_puts(": expected ");
  print_element_value(check.expected);
  board_puts(", got ");
  print_element_value(check.got);
  board_puts(" (");
  print_worst(check);
  board_puts(")\n");
  return false;
}
#endif  // RUNNER_BUNDLED

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
  const size_t model_size = check.pte_size;
#else
  const uint8_t* const model_data = model_pte;
  const size_t model_size = model_pte_size;
#endif
#if RUNNER_BUNDLED
  // The program inside the bundled program, read in place.
  const void* program_data = nullptr;
  size_t program_size = 0;
  {
    const Error found = executorch::bundled_program::get_program_data(
        const_cast<uint8_t*>(model_data), model_size, &program_data, &program_size);
    if (found != Error::Ok) return fail("get_program_data", found, "not a bundled program");
  }
#else
  const void* const program_data = model_data;
  const size_t program_size = model_size;
#endif
  BufferDataLoader loader(program_data, program_size);

#if RUNNER_PROFILE == 1
  // Program::load takes no event tracer: the runner times it as a phase of its own.
  auto load_event = model::event_tracer()->start_profiling("Program::load");
#endif
  uint64_t start = board_cycles();
  Result<Program> program = Program::load(&loader, RUNNER_VERIFICATION);
#if RUNNER_PROFILE == 1
  model::event_tracer()->end_profiling(load_event);
#endif
  if (!program.ok()) {
    return fail("Program::load", program.error(),
                program.error() == Error::InvalidProgram ? "the model is corrupt" : nullptr);
  }
  print_cycles("program load", board_cycles() - start);

  // The method the build chose (method=, else the program's first) and checked the
  // program for: named when there are others, which ExecuTorch's runner runs on request.
  const char* const method_name = model::method_name;
  if (program->num_methods() > 1) {
    board_puts("Method: ");
    board_puts(method_name);
    board_puts(" (of ");
    board_put_u64(program->num_methods());
    board_puts(")\n");
  }
#if RUNNER_PROFILE
  if (!model::attach_event_tracer(program_data, method_name)) {
    board_puts("Profile warning: the method's tables are larger than the build sized for\n");
  }
#endif
  Result<MethodMeta> meta = program->method_meta(method_name);
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
  model::clear_state(model::planned_spans);
  MemoryAllocator method_allocator(model::method_pool_size, model::method_pool);
  MemoryAllocator temp_allocator(model::temp_pool_size, model::temp_pool);
  HierarchicalAllocator planned_memory({model::planned_spans, num_planned});
  MemoryManager memory_manager(&method_allocator, &planned_memory, &temp_allocator);

  start = board_cycles();
  Result<Method> method = program->load_method(method_name, &memory_manager, RUNNER_EVENT_TRACER);
  if (!method.ok()) {
    return fail("load_method", method.error(),
                method.error() == Error::MemoryAllocationFailed
                    ? "method pool too small: raise method_pool=" : nullptr);
  }
  print_cycles("method load", board_cycles() - start);
  Result<void**> unplanned_inputs = model::give_unplanned_io_memory(*method, *meta, method_allocator);
  if (!unplanned_inputs.ok()) {
    return fail("giving unplanned inputs and outputs memory", unplanned_inputs.error(),
                unplanned_inputs.error() == Error::MemoryAllocationFailed
                    ? "method pool too small: raise method_pool=" : nullptr);
  }

#if RUNNER_BUNDLED
  // Every test case of the method: its inputs, num_executions runs, its outputs checked.
  const auto* suite = test_suite(model_data, method_name);
  const auto* test_cases = suite != nullptr ? suite->test_cases() : nullptr;
  if (test_cases == nullptr || test_cases->size() == 0) {
    return fail("finding test cases", Error::NotFound,
                "the bundled program has none for the method");
  }
  size_t failed = 0;
  for (size_t c = 0; c < test_cases->size(); ++c) {
    for (int run = 0; run < model::num_executions; ++run) {
      Error status = executorch::bundled_program::load_bundled_input(
          *method, model_data, c);
      if (status != Error::Ok) return fail("load_bundled_input", status);
      status = copy_shared_inputs(*method, *unplanned_inputs);
      if (status != Error::Ok) return fail("copying the test case's inputs", status);
      status = relayout_bundled_inputs(
          *method, test_cases->Get(static_cast<flatbuffers::uoffset_t>(c)));
      if (status != Error::Ok) return fail("laying out the test case's inputs", status);
      start = board_cycles();
      status = method->execute();
      if (status != Error::Ok) return fail("execute", status);
      print_cycles("execute", board_cycles() - start);
      temp_allocator.reset();
    }
    if (!check_test_case(*method, test_cases->Get(static_cast<flatbuffers::uoffset_t>(c)), c))
      ++failed;
  }
#if RUNNER_PROFILE
  model::report_event_tracer();
#endif
  return failed ? 1 : 0;
#else
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
  model::report_event_tracer();
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
#endif  // RUNNER_BUNDLED
}
