// The model region check (model_check.h).
#include "model_check.h"

#include <cstring>

#include <executorch/runtime/kernel/operator_registry.h>

namespace model_check {
namespace {

constexpr uint32_t kPolynomial = 0xEDB88320u;  // zlib's, reflected
constexpr size_t kHeaderSize = 16;

// Four bytes at a time through four 256-entry tables ("slicing by 4", 4 KiB of rodata,
// built by the compiler): about 4 cycles a byte on the CV32E40P, where a byte at a time
// through one table took 15 (and bit by bit about 40).
struct Tables {
  uint32_t entry[4][256];
  constexpr Tables() : entry() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
      entry[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int t = 1; t < 4; ++t) {
        const uint32_t previous = entry[t - 1][i];
        entry[t][i] = (previous >> 8) ^ entry[0][previous & 0xFF];
      }
    }
  }
};
constexpr Tables kTables;

// By name: a kernel registered for particular dtypes (a kernel key) counts too, where
// registry_has_op_function() without tensor metadata finds only fallback kernels.
bool registered(const char* op) {
  for (const auto& kernel : executorch::runtime::get_registered_kernels()) {
    if (std::strcmp(kernel.name_, op) == 0) return true;
  }
  return false;
}

uint32_t read_u32(const uint8_t* p) {
  uint32_t value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

}  // namespace

uint32_t crc32(const uint8_t* data, size_t size) {
  uint32_t c = 0xFFFFFFFFu;
  const auto& t = kTables.entry;
  for (; size && (reinterpret_cast<uintptr_t>(data) & 3); --size, ++data)
    c = t[0][(c ^ *data) & 0xFF] ^ (c >> 8);
  for (; size >= 4; size -= 4, data += 4) {
    c ^= *reinterpret_cast<const uint32_t*>(data);   // aligned; little-endian: first byte lowest
    c = t[3][c & 0xFF] ^ t[2][(c >> 8) & 0xFF] ^ t[1][(c >> 16) & 0xFF] ^ t[0][c >> 24];
  }
  for (; size; --size, ++data) c = t[0][(c ^ *data) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

Result check_region(const uint8_t* origin, size_t length) {
  Result result{Status::kNoModel, 0, nullptr, 0};
  if (length < kHeaderSize || std::memcmp(origin, "PTE1", 4) != 0) return result;
  const uint32_t pte_size = read_u32(origin + 4);
  const uint32_t sum = read_u32(origin + 8);
  const uint32_t table = read_u32(origin + 12);
  result.status = Status::kBeyondRegion;
  if (table < kHeaderSize + pte_size || table > length - 4) return result;
  const uint32_t count = read_u32(origin + table);
  // The names end where the last NUL of the table is; none may reach past the region.
  const uint8_t* name = origin + table + 4;
  const uint8_t* const end = origin + length;
  const uint8_t* names_end = name;
  for (uint32_t i = 0; i < count; ++i) {
    const void* nul = std::memchr(names_end, 0, static_cast<size_t>(end - names_end));
    if (nul == nullptr) return result;
    names_end = static_cast<const uint8_t*>(nul) + 1;
  }
  result.status = Status::kChecksum;
  if (crc32(origin + kHeaderSize, static_cast<size_t>(names_end - origin) - kHeaderSize) != sum)
    return result;
  for (uint32_t i = 0; i < count; ++i) {
    const char* op = reinterpret_cast<const char*>(name);
    if (!registered(op)) {
      result.status = Status::kOperatorMissing;
      result.operator_index = i;
      return result;
    }
    name += std::strlen(op) + 1;
  }
  result.status = Status::kOk;
  result.pte = origin + kHeaderSize;
  result.pte_size = pte_size;
  return result;
}

}  // namespace model_check
