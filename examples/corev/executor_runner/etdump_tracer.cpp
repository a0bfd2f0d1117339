// profile=etdump: ExecuTorch's own event tracer, ETDumpGen (devtools/etdump, compiled
// from the tree with the flatcc runtime), as the runner's event tracer (runner_model.h).
//
// No heap: ETDumpGen builds the ETDump with flatcc inside one static buffer, which the
// build sizes for the method (runner_config.h: RUNNER_ETDUMP_BUFFER_SIZE; ETDumpGen
// takes a quarter of it, at most 128 KiB, for flatcc's stacks and wants more than
// 128 KiB in all). It is placed in .noinit and constructed on first use, so startup
// spends nothing on it and no destructor is registered.
//
// After the executions the runner calls report_event_tracer(): the ETDump leaves the
// target as text on the console, base64 lines between the markers ExecuTorch's Arm
// runner uses (examples/arm/executor_runner), as a shell script that decodes it:
//
//   ETDump: 2712 bytes (buffer 133120)
//   #[RUN THIS]
//   # Writing etdump.bin [base64]
//   base64 -d >etdump.bin <<'EOF'
//   AAAAAEVEMDAAAAAA...                    76 characters a line
//   EOF
//   # Generate cpu cycle table with:
//   python3 -m executorch.devtools.inspector.inspector_cli --etdump_path etdump.bin ...
//   #[END]
//
// `scons run` decodes it into executor_runner.etdp beside the firmware
// (site_scons/etcorev/run/etdump.py).
#include <cstddef>
#include <cstdint>
#include <new>

#include <executorch/devtools/etdump/etdump_flatcc.h>

#include "board.h"
#include "runner_config.h"
#include "runner_model.h"

namespace runner_model {
namespace {

using executorch::etdump::ETDumpGen;
using executorch::etdump::ETDumpResult;

constexpr size_t kLineLength = 76;  // base64 characters a line (as MIME has them)

__attribute__((section(".noinit"), aligned(64))) uint8_t buffer[RUNNER_ETDUMP_BUFFER_SIZE];
alignas(ETDumpGen) uint8_t storage[sizeof(ETDumpGen)];
ETDumpGen* generator = nullptr;

ETDumpGen* get() {
  if (generator == nullptr) {
    generator = new (storage) ETDumpGen(executorch::runtime::Span<uint8_t>(buffer, sizeof buffer));
  }
  return generator;
}

// Base64 (RFC 4648, with padding) of data, kLineLength characters a line.
void put_base64(const uint8_t* data, size_t size) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t column = 0;
  for (size_t i = 0; i < size; i += 3) {
    const size_t left = size - i;
    const uint32_t group = (static_cast<uint32_t>(data[i]) << 16) |
                           (left > 1 ? static_cast<uint32_t>(data[i + 1]) << 8 : 0) |
                           (left > 2 ? static_cast<uint32_t>(data[i + 2]) : 0);
    const char out[4] = {kAlphabet[(group >> 18) & 63], kAlphabet[(group >> 12) & 63],
                         left > 1 ? kAlphabet[(group >> 6) & 63] : '=',
                         left > 2 ? kAlphabet[group & 63] : '='};
    for (char c : out) {
      board_putc(c);
      if (++column == kLineLength) {
        board_putc('\n');
        column = 0;
      }
    }
  }
  if (column) board_putc('\n');
}

}  // namespace

executorch::runtime::EventTracer* event_tracer() { return get(); }

bool attach_event_tracer(const void* pte, const char* method_name) {
  (void)pte;
  (void)method_name;
  get();
  return true;
}

void report_event_tracer() {
  const ETDumpResult result = get()->get_etdump_data();
  if (result.buf == nullptr || result.size == 0) {
    board_puts("ETDump: empty (no events were recorded)\n");
    return;
  }
  board_puts("ETDump: ");
  board_put_u64(result.size);
  board_puts(" bytes (buffer ");
  board_put_u64(sizeof buffer);
  board_puts(")\n#[RUN THIS]\n# Writing etdump.bin [base64]\nbase64 -d >etdump.bin <<'EOF'\n");
  put_base64(static_cast<const uint8_t*>(result.buf), result.size);
  board_puts("EOF\n# Generate cpu cycle table with:\n"
             "python3 -m executorch.devtools.inspector.inspector_cli --etdump_path etdump.bin "
             "--source_time_scale cycles --target_time_scale cycles\n#[END]\n");
}

}  // namespace runner_model
