// A model programmed separately from the firmware (model_placement=external) is checked
// before Program::load: its region's header (written by the build, see
// site_scons/site_tools/model_embed.py) carries a CRC-32 of the model and of the list of
// operators it uses, and each of those must be registered in this firmware. A flash
// holding another model, or a damaged one, is refused by number (scons run names it)
// instead of running with wrong weights or failing later.
#pragma once

#include <cstddef>
#include <cstdint>

namespace model_check {

enum class Status : uint8_t {
  kOk = 0,
  kNoModel = 1,           // no header: the model region was not programmed
  kBeyondRegion = 2,      // the header's sizes reach past the region
  kChecksum = 3,          // the CRC-32 does not match: damaged, or not what was written
  kOperatorMissing = 4,   // an operator of the model is not in this firmware
};

struct Result {
  Status status;
  uint32_t operator_index;  // kOperatorMissing: which entry of the model's table
  const uint8_t* pte;       // kOk: the program and its size
  size_t pte_size;
};

// The model region [origin, origin + length): its header, sum and operators.
Result check_region(const uint8_t* origin, size_t length);

// zlib's CRC-32 (the build computes it with Python's zlib.crc32).
uint32_t crc32(const uint8_t* data, size_t size);

}  // namespace model_check
