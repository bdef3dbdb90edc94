#include "common/pattern.h"

#include <cstring>

#include "common/datatypes.h"
#include "common/float16.h"

namespace slimeccl_perf {
namespace {

// Moves rank r's pattern far from rank r±1's, so a block landing at the wrong rank's place shows up.
constexpr uint64_t kRankStride = 7919;

template <typename Stored>
Stored convertTo(slimecclDataType_t type, uint64_t value) {
  if (type == slimecclFloat16) return static_cast<Stored>(floatToHalf(static_cast<float>(value)));
  if (type == slimecclBfloat16) return static_cast<Stored>(floatToBfloat16(static_cast<float>(value)));
  return static_cast<Stored>(value);
}

// One pass with a wrapping counter instead of a division per element: fills are on the timed tool's path.
template <typename Stored>
void fillAs(slimecclDataType_t type, void* buffer, size_t count, uint64_t first, uint64_t period) {
  auto* out = static_cast<Stored*>(buffer);
  uint64_t value = first;
  for (size_t i = 0; i < count; ++i) {
    out[i] = convertTo<Stored>(type, value);
    if (++value == period) value = 0;
  }
}

void fillValues(slimecclDataType_t type, void* buffer, size_t count, uint64_t first, uint64_t period) {
  switch (type) {
    case slimecclInt8: fillAs<int8_t>(type, buffer, count, first, period); return;
    case slimecclUint8: fillAs<uint8_t>(type, buffer, count, first, period); return;
    case slimecclInt32: fillAs<int32_t>(type, buffer, count, first, period); return;
    case slimecclUint32: fillAs<uint32_t>(type, buffer, count, first, period); return;
    case slimecclInt64: fillAs<int64_t>(type, buffer, count, first, period); return;
    case slimecclUint64: fillAs<uint64_t>(type, buffer, count, first, period); return;
    case slimecclFloat16: fillAs<uint16_t>(type, buffer, count, first, period); return;
    case slimecclFloat32: fillAs<float>(type, buffer, count, first, period); return;
    case slimecclFloat64: fillAs<double>(type, buffer, count, first, period); return;
    case slimecclBfloat16: fillAs<uint16_t>(type, buffer, count, first, period); return;
    case slimecclNumTypes: return;
  }
}

}  // namespace

uint64_t patternPeriod(slimecclDataType_t type) {
  // Primes below each type's limit of exact non-negative integers.
  switch (type) {
    case slimecclInt8: return 127;
    case slimecclUint8: return 251;
    case slimecclBfloat16: return 251;
    case slimecclFloat16: return 2039;
    case slimecclFloat32: return 16777213;
    case slimecclInt32:
    case slimecclUint32:
    case slimecclInt64:
    case slimecclUint64:
    case slimecclFloat64:
    case slimecclNumTypes: break;
  }
  return 2147483629;
}

uint64_t patternValue(slimecclDataType_t type, int rank, size_t index) {
  const uint64_t period = patternPeriod(type);
  return (static_cast<uint64_t>(index) % period + static_cast<uint64_t>(rank) * kRankStride) % period;
}

void storeValue(slimecclDataType_t type, uint64_t value, void* buffer, size_t index) {
  fillValues(type, static_cast<char*>(buffer) + index * dataTypeSize(type), 1, value, patternPeriod(type));
}

void fillPattern(void* buffer, slimecclDataType_t type, size_t count, int rank, size_t firstIndex) {
  fillValues(type, buffer, count, patternValue(type, rank, firstIndex), patternPeriod(type));
}

void fillPoison(void* buffer, slimecclDataType_t type, size_t count) {
  std::memset(buffer, 0xFF, count * dataTypeSize(type));
}

size_t countMismatches(const void* actual, const void* expected, slimecclDataType_t type, size_t count) {
  const size_t elementSize = dataTypeSize(type);
  if (count == 0 || std::memcmp(actual, expected, count * elementSize) == 0) return 0;
  const auto* actualBytes = static_cast<const unsigned char*>(actual);
  const auto* expectedBytes = static_cast<const unsigned char*>(expected);
  size_t mismatches = 0;
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(actualBytes + i * elementSize, expectedBytes + i * elementSize, elementSize) != 0) ++mismatches;
  }
  return mismatches;
}

}  // namespace slimeccl_perf
