// Test data: per-rank byte patterns and receive buffers fenced by guard bytes.
#pragma once

#include <slimeccl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace slimeccl_test {

inline constexpr slimecclDataType_t kAllDatatypes[] = {
    slimecclInt8,   slimecclUint8,   slimecclInt32,   slimecclUint32,  slimecclInt64,
    slimecclUint64, slimecclFloat16, slimecclFloat32, slimecclFloat64, slimecclBfloat16,
};

size_t datatypeSize(slimecclDataType_t datatype);
const char* datatypeName(slimecclDataType_t datatype);

// Bytes that depend on (seed, rank, offset). Collectives only move bytes, so comparing bits
// covers every datatype (half and bfloat16 included); a fresh seed per call makes data left
// over from an earlier call fail the comparison.
void fillPattern(void* dst, size_t bytes, uint64_t seed, int rank);

// Empty when `data` holds the pattern of (seed, rank); otherwise names the first differing byte.
std::string patternMismatch(const void* data, size_t bytes, uint64_t seed, int rank);

// A buffer with guard bytes on both sides, so writes past either end are caught. The payload
// starts filled with a byte no pattern is tied to, so a block the library never wrote shows up.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes);

  uint8_t* data() { return storage_.data() + kGuardBytes; }
  const uint8_t* data() const { return storage_.data() + kGuardBytes; }
  size_t size() const { return bytes_; }

  // Empty when both guards are intact; otherwise says which side was overwritten and where.
  std::string guardDamage() const;

 private:
  static constexpr size_t kGuardBytes = 256;
  static constexpr uint8_t kGuardByte = 0xA5;
  static constexpr uint8_t kUnwrittenByte = 0xEE;

  size_t bytes_;
  std::vector<uint8_t> storage_;
};

}  // namespace slimeccl_test
