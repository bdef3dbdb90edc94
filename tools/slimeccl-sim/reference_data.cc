#include "tools/slimeccl-sim/reference_data.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "algorithms/reduce.h"

namespace slimeccl::sim {
namespace {

// Values stay at or below this: every integer up to it is exact in the type.
uint64_t exactIntegerLimit(slimecclDataType_t type) {
  switch (type) {
    case slimecclInt8: return 127;
    case slimecclUint8: return 255;
    case slimecclFloat16: return 2048;
    case slimecclBfloat16: return 256;
    default: return uint64_t{1} << 24;
  }
}

// The largest power of two a product may reach in the type.
uint64_t largestProductExponent(slimecclDataType_t type) {
  switch (type) {
    case slimecclInt8: return 6;
    case slimecclUint8: return 7;
    case slimecclFloat16: return 15;
    case slimecclInt32: return 30;
    case slimecclUint32: return 31;
    default: return 62;
  }
}

// Scatters neighbouring indices (Fibonacci hashing), so values do not repeat with any block size.
uint64_t scatter(size_t index) { return (static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull) >> 33; }

uint64_t elementValue(const SimCall& call, int rank, size_t index) {
  const auto n = static_cast<uint64_t>(call.nranks);
  const auto r = static_cast<uint64_t>(rank);
  const uint64_t limit = exactIntegerLimit(call.type);
  if (isReduction(call.coll) && (call.op == slimecclSum || call.op == slimecclAvg)) {
    return (scatter(index) + r * 13) % (limit / n + 1);
  }
  if (isReduction(call.coll) && call.op == slimecclProd) {
    // 2 on `twos` ranks in a row (wrapping) from `first` on, 1 elsewhere: the product is 2^twos.
    const uint64_t twos = scatter(index) % (std::min(largestProductExponent(call.type), n) + 1);
    const uint64_t first = (scatter(index) >> 8) % n;
    return (r + n - first) % n < twos ? 2 : 1;
  }
  return (scatter(index) + r * 131) % (limit + 1);
}

template <typename T>
void storeAs(T value, char* at) {
  std::memcpy(at, &value, sizeof(T));
}

void storeElement(slimecclDataType_t type, uint64_t value, char* at) {
  switch (type) {
    case slimecclInt8: return storeAs(static_cast<int8_t>(value), at);
    case slimecclUint8: return storeAs(static_cast<uint8_t>(value), at);
    case slimecclInt32: return storeAs(static_cast<int32_t>(value), at);
    case slimecclUint32: return storeAs(static_cast<uint32_t>(value), at);
    case slimecclInt64: return storeAs(static_cast<int64_t>(value), at);
    case slimecclUint64: return storeAs(value, at);
    case slimecclFloat16: return storeAs(floatToHalf(static_cast<float>(value)), at);
    case slimecclFloat32: return storeAs(static_cast<float>(value), at);
    case slimecclFloat64: return storeAs(static_cast<double>(value), at);
    case slimecclBfloat16: return storeAs(floatToBfloat16(static_cast<float>(value)), at);
    default: return;
  }
}

// Elements of every rank's input that a reduction combines.
size_t reducedCount(const SimCall& call) {
  return call.coll == Coll::ReduceScatter ? call.count * static_cast<size_t>(call.nranks) : call.count;
}

}  // namespace

RankBufferBytes bufferBytes(const SimCall& call, int rank) {
  const size_t vector = call.count * typeSize(call.type);
  const size_t all = vector * static_cast<size_t>(call.nranks);
  const bool root = rank == call.root;
  switch (call.coll) {
    case Coll::AllGather: return {vector, all};
    case Coll::ReduceScatter: return {all, vector};
    case Coll::Broadcast: return {root ? vector : 0, vector};
    case Coll::Reduce: return {vector, root ? vector : 0};
    case Coll::AlltoAll: return {all, all};
    default: return {vector, vector};  // AllReduce
  }
}

ReferenceData::ReferenceData(const SimCall& call) : call_(call) {
  switch (call.coll) {
    case Coll::AllGather:
      for (int source = 0; source < call.nranks; ++source) {
        const std::vector<char> block = inputElements(source, 0, call.count);
        shared_.insert(shared_.end(), block.begin(), block.end());
      }
      return;
    case Coll::Broadcast: shared_ = inputElements(call.root, 0, call.count); return;
    case Coll::AlltoAll: return;
    default: break;  // reductions
  }
  const size_t count = reducedCount(call);
  shared_ = inputElements(0, 0, count);
  for (int rank = 1; rank < call.nranks; ++rank) {
    const std::vector<char> next = inputElements(rank, 0, count);
    reduceArrays(shared_.data(), shared_.data(), next.data(), count, call.type, call.op);
  }
  if (call.op == slimecclAvg) divideArray(shared_.data(), count, call.type, call.nranks);
}

std::vector<char> ReferenceData::inputElements(int rank, size_t first, size_t count) const {
  const size_t size = typeSize(call_.type);
  std::vector<char> bytes(count * size);
  for (size_t i = 0; i < count; ++i) storeElement(call_.type, elementValue(call_, rank, first + i), &bytes[i * size]);
  return bytes;
}

std::vector<char> ReferenceData::input(int rank) const {
  return inputElements(rank, 0, bufferBytes(call_, rank).send / typeSize(call_.type));
}

std::vector<char> ReferenceData::expected(int rank) const {
  const size_t blockBytes = call_.count * typeSize(call_.type);
  switch (call_.coll) {
    case Coll::AlltoAll: {
      std::vector<char> result;
      for (int source = 0; source < call_.nranks; ++source) {
        const std::vector<char> block = inputElements(source, static_cast<size_t>(rank) * call_.count, call_.count);
        result.insert(result.end(), block.begin(), block.end());
      }
      return result;
    }
    case Coll::ReduceScatter: {
      const auto block = shared_.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(rank) * blockBytes);
      return {block, block + static_cast<ptrdiff_t>(blockBytes)};
    }
    case Coll::Reduce: return rank == call_.root ? shared_ : std::vector<char>{};
    default: return shared_;  // AllGather, Broadcast, AllReduce
  }
}

}  // namespace slimeccl::sim
