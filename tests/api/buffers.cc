#include "buffers.h"

#include <cstring>

#include "rank_check.h"

namespace slimeccl_test {

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Eight pattern bytes at a time: word `word` of the (seed, rank) stream.
uint64_t patternWord(uint64_t seed, int rank, size_t word) {
  return mix(mix(seed * 0x100000001B3ull + static_cast<uint64_t>(rank)) ^ word);
}

uint8_t patternByte(uint64_t seed, int rank, size_t offset) {
  return static_cast<uint8_t>(patternWord(seed, rank, offset / 8) >> (8 * (offset % 8)));
}

}  // namespace

size_t datatypeSize(slimecclDataType_t datatype) {
  switch (datatype) {
    case slimecclInt8:
    case slimecclUint8: return 1;
    case slimecclFloat16:
    case slimecclBfloat16: return 2;
    case slimecclInt32:
    case slimecclUint32:
    case slimecclFloat32: return 4;
    case slimecclInt64:
    case slimecclUint64:
    case slimecclFloat64: return 8;
    case slimecclNumTypes: break;
  }
  return 0;
}

const char* datatypeName(slimecclDataType_t datatype) {
  switch (datatype) {
    case slimecclInt8: return "int8";
    case slimecclUint8: return "uint8";
    case slimecclInt32: return "int32";
    case slimecclUint32: return "uint32";
    case slimecclInt64: return "int64";
    case slimecclUint64: return "uint64";
    case slimecclFloat16: return "float16";
    case slimecclFloat32: return "float32";
    case slimecclFloat64: return "float64";
    case slimecclBfloat16: return "bfloat16";
    case slimecclNumTypes: break;
  }
  return "unknown datatype";
}

void fillPattern(void* dst, size_t bytes, uint64_t seed, int rank) {
  auto* out = static_cast<uint8_t*>(dst);
  size_t offset = 0;
  for (; offset + 8 <= bytes; offset += 8) {
    uint64_t word = patternWord(seed, rank, offset / 8);
    std::memcpy(out + offset, &word, 8);
  }
  for (; offset < bytes; ++offset) out[offset] = patternByte(seed, rank, offset);
}

std::string patternMismatch(const void* data, size_t bytes, uint64_t seed, int rank) {
  const auto* in = static_cast<const uint8_t*>(data);
  // Whole words first, as the data is large; the byte loop below then names the first bad byte.
  size_t start = 0;
  for (; start + 8 <= bytes; start += 8) {
    uint64_t expected = patternWord(seed, rank, start / 8);
    if (std::memcmp(in + start, &expected, 8) != 0) break;
  }
  for (size_t offset = start; offset < bytes; ++offset) {
    uint8_t expected = patternByte(seed, rank, offset);
    if (in[offset] != expected) {
      return concat("byte ", offset, " of ", bytes, " is 0x", std::hex, static_cast<int>(in[offset]), ", expected 0x",
                    static_cast<int>(expected), std::dec, " (data of rank ", rank, ")");
    }
  }
  return {};
}

GuardedBuffer::GuardedBuffer(size_t bytes) : bytes_(bytes), storage_(bytes + 2 * kGuardBytes, kGuardByte) {
  std::memset(data(), kUnwrittenByte, bytes);
}

std::string GuardedBuffer::guardDamage() const {
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (storage_[i] != kGuardByte) return concat("guard byte ", kGuardBytes - i, " before the buffer was overwritten");
    if (storage_[kGuardBytes + bytes_ + i] != kGuardByte)
      return concat("guard byte ", i, " after the buffer (of ", bytes_, " bytes) was overwritten");
  }
  return {};
}

}  // namespace slimeccl_test
