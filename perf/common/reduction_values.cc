#include "common/reduction_values.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/datatypes.h"
#include "common/float16.h"
#include "common/pattern.h"

namespace slimeccl_perf {
namespace {

// max and min draw from this many values at most; enough to tell blocks apart.
constexpr uint64_t kMaxMinRange = uint64_t{1} << 30;

// The largest L such that every integer 0..L is exact in the type.
uint64_t exactIntegerLimit(slimecclDataType_t type) {
  switch (type) {
    case slimecclInt8: return std::numeric_limits<int8_t>::max();
    case slimecclUint8: return std::numeric_limits<uint8_t>::max();
    case slimecclInt32: return std::numeric_limits<int32_t>::max();
    case slimecclUint32: return std::numeric_limits<uint32_t>::max();
    case slimecclInt64: return std::numeric_limits<int64_t>::max();
    case slimecclUint64: return std::numeric_limits<uint64_t>::max();
    case slimecclFloat16: return uint64_t{1} << 11;
    case slimecclFloat32: return uint64_t{1} << 24;
    case slimecclFloat64: return uint64_t{1} << 53;
    case slimecclBfloat16: return uint64_t{1} << 8;
    case slimecclNumTypes: break;
  }
  return 0;
}

// The largest k such that 2^k is in the type's range; at most 63 so products fit the uint64 fold.
uint64_t largestPowerOfTwoExponent(slimecclDataType_t type) {
  switch (type) {
    case slimecclInt8: return 6;
    case slimecclUint8: return 7;
    case slimecclInt32: return 30;
    case slimecclUint32: return 31;
    case slimecclInt64: return 62;
    case slimecclFloat16: return 15;
    case slimecclUint64:
    case slimecclFloat32:
    case slimecclFloat64:
    case slimecclBfloat16:
    case slimecclNumTypes: break;
  }
  return 63;
}

// splitmix64's finaliser: neighbouring keys give unrelated values.
uint64_t mix(uint64_t key) {
  key = (key ^ (key >> 30)) * 0xBF58476D1CE4E5B9ull;
  key = (key ^ (key >> 27)) * 0x94D049BB133111EBull;
  return key ^ (key >> 31);
}

uint64_t hashOf(uint64_t slot, uint64_t salt) { return mix(slot * 0x9E3779B97F4A7C15ull + mix(salt)); }

// Salts that no rank's salt (rank + 1) can take.
constexpr uint64_t kTwosCountSalt = uint64_t{1} << 40;
constexpr uint64_t kTwosStartSalt = (uint64_t{1} << 40) + 1;

uint64_t inputValue(slimecclDataType_t type, slimecclRedOp_t op, uint64_t nranks, uint64_t rank, uint64_t slot) {
  const uint64_t limit = exactIntegerLimit(type);
  switch (op) {
    case slimecclProd: {
      // 2 on `twos` ranks in a row (wrapping) from `first` on, 1 elsewhere: the product is 2^twos.
      const uint64_t twos = hashOf(slot, kTwosCountSalt) % (std::min(largestPowerOfTwoExponent(type), nranks) + 1);
      const uint64_t first = hashOf(slot, kTwosStartSalt) % nranks;
      return (rank + nranks - first) % nranks < twos ? 2 : 1;
    }
    case slimecclMax:
    case slimecclMin: return hashOf(slot, rank + 1) % (std::min(limit, kMaxMinRange) + 1);
    case slimecclSum:
    case slimecclAvg:
    case slimecclNumOps:
    case slimecclMaxRedOp: break;
  }
  return hashOf(slot, rank + 1) % (std::min(limit / nranks, kMaxMinRange) + 1);
}

uint64_t reduceSlot(slimecclDataType_t type, slimecclRedOp_t op, uint64_t nranks, uint64_t slot) {
  uint64_t result = inputValue(type, op, nranks, 0, slot);
  for (uint64_t rank = 1; rank < nranks; ++rank) {
    const uint64_t value = inputValue(type, op, nranks, rank, slot);
    switch (op) {
      case slimecclProd: result *= value; break;
      case slimecclMax: result = std::max(result, value); break;
      case slimecclMin: result = std::min(result, value); break;
      case slimecclSum:
      case slimecclAvg:
      case slimecclNumOps:
      case slimecclMaxRedOp: result += value; break;
    }
  }
  return result;
}

template <typename T>
void storeAs(T value, void* buffer, size_t index) {
  std::memcpy(static_cast<char*>(buffer) + index * sizeof(T), &value, sizeof(T));
}

// avg's result from the exact sum, divided the way the library divides in each type.
void storeAverage(slimecclDataType_t type, uint64_t sum, int nranks, void* buffer, size_t index) {
  const float floatQuotient = static_cast<float>(sum) / static_cast<float>(nranks);
  switch (type) {
    case slimecclFloat16: storeAs(floatToHalf(floatQuotient), buffer, index); return;
    case slimecclBfloat16: storeAs(floatToBfloat16(floatQuotient), buffer, index); return;
    case slimecclFloat32: storeAs(floatQuotient, buffer, index); return;
    case slimecclFloat64: storeAs(static_cast<double>(sum) / static_cast<double>(nranks), buffer, index); return;
    default: storeValue(type, sum / static_cast<uint64_t>(nranks), buffer, index); return;
  }
}

// Elements [0, period) of `buffer` hold one period; copies it forward until `count` are written.
void repeatPeriod(void* buffer, size_t elementSize, size_t count) {
  auto* bytes = static_cast<char*>(buffer);
  // Doubling keeps the filled length a multiple of the period, so each copy continues it exactly.
  for (size_t filled = std::min<size_t>(count, kReductionValuePeriod); filled < count;) {
    const size_t copied = std::min(filled, count - filled);
    std::memcpy(bytes + filled * elementSize, bytes, copied * elementSize);
    filled += copied;
  }
}

}  // namespace

uint64_t reductionInputValue(slimecclDataType_t type, slimecclRedOp_t op, int nranks, int rank, size_t index) {
  const uint64_t slot = index % kReductionValuePeriod;
  return inputValue(type, op, static_cast<uint64_t>(nranks), static_cast<uint64_t>(rank), slot);
}

void fillReductionInput(void* buffer, slimecclDataType_t type, slimecclRedOp_t op, int nranks, int rank, size_t count,
                        size_t firstIndex) {
  const size_t onePeriod = std::min<size_t>(count, kReductionValuePeriod);
  for (size_t i = 0; i < onePeriod; ++i) {
    storeValue(type, reductionInputValue(type, op, nranks, rank, firstIndex + i), buffer, i);
  }
  repeatPeriod(buffer, dataTypeSize(type), count);
}

void fillReductionResult(void* buffer, slimecclDataType_t type, slimecclRedOp_t op, int nranks, size_t count,
                         size_t firstIndex) {
  const size_t onePeriod = std::min<size_t>(count, kReductionValuePeriod);
  for (size_t i = 0; i < onePeriod; ++i) {
    const uint64_t slot = (firstIndex + i) % kReductionValuePeriod;
    const uint64_t result = reduceSlot(type, op, static_cast<uint64_t>(nranks), slot);
    if (op == slimecclAvg) {
      storeAverage(type, result, nranks, buffer, i);
    } else {
      storeValue(type, result, buffer, i);
    }
  }
  repeatPeriod(buffer, dataTypeSize(type), count);
}

}  // namespace slimeccl_perf
