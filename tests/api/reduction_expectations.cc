#include "reduction_expectations.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "buffers.h"
#include "element_values.h"
#include "rank_check.h"

namespace slimeccl_test {

namespace {

// The sum of every rank's additive input stays within [-68, 120]: exact in int8/uint8 and in
// bfloat16, whose integers are exact up to 256.
constexpr int64_t kSumBudget = 120;
// At most six factors of 2 per element (ranks below this, one in three), so |prod| <= 64.
constexpr int kMaxRanksWithFactorTwo = 18;
constexpr int64_t kExtremeSpan = 120;

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t elementHash(uint64_t seed, int rank, size_t element) {
  return mix(seed * 0xD6E8FEB86659FD93ull + static_cast<uint64_t>(element) * 0x9E3779B97F4A7C15ull +
             static_cast<uint64_t>(rank) * 0xC2B2AE3D27D4EB4Full);
}

int64_t positiveModulo(int64_t value, int64_t modulus) { return ((value % modulus) + modulus) % modulus; }

}  // namespace

const char* opName(slimecclRedOp_t op) {
  switch (op) {
    case slimecclSum: return "sum";
    case slimecclProd: return "prod";
    case slimecclMax: return "max";
    case slimecclMin: return "min";
    case slimecclAvg: return "avg";
    case slimecclNumOps:
    case slimecclMaxRedOp: break;
  }
  return "unknown op";
}

ReductionValues::ReductionValues(slimecclDataType_t datatype, slimecclRedOp_t op, int nranks, uint64_t seed)
    : datatype_(datatype), op_(op), nranks_(nranks), seed_(seed), elementBytes_(datatypeSize(datatype)) {
  RANK_CHECK(nranks >= 1 && nranks <= kSumBudget, "inputs are exact for 1..", kSumBudget, " ranks, not ", nranks);
}

int64_t ReductionValues::additiveInput(uint64_t hash) const {
  const int64_t span = kSumBudget / nranks_;
  const int64_t value = static_cast<int64_t>(hash % static_cast<uint64_t>(span + 1));
  return isUnsignedInteger(datatype_) ? value : value - span / 2;
}

int64_t ReductionValues::input(int rank, size_t element) const {
  const uint64_t hash = elementHash(seed_, rank, element);
  switch (op_) {
    case slimecclSum: return additiveInput(hash);
    case slimecclAvg: {
      if (!isFloatingPoint(datatype_) || rank != nranks_ - 1) return additiveInput(hash);
      int64_t others = 0;
      for (int other = 0; other < rank; ++other) others += additiveInput(elementHash(seed_, other, element));
      const int64_t own = additiveInput(hash);
      return own - positiveModulo(others + own, nranks_);
    }
    case slimecclProd: {
      const bool two = rank < kMaxRanksWithFactorTwo && (static_cast<uint64_t>(rank) + element + seed_) % 3 == 0;
      const bool negative = !isUnsignedInteger(datatype_) && ((hash >> 40) & 1) != 0;
      return (two ? 2 : 1) * (negative ? -1 : 1);
    }
    case slimecclMax:
    case slimecclMin: {
      const int64_t value = static_cast<int64_t>(hash % (kExtremeSpan + 1));
      return isUnsignedInteger(datatype_) ? value : value - kExtremeSpan / 2;
    }
    case slimecclNumOps:
    case slimecclMaxRedOp: break;
  }
  failRank(__FILE__, __LINE__, concat("no such op: ", static_cast<int>(op_)));
}

int64_t ReductionValues::result(size_t element) const {
  int64_t reduced = input(0, element);
  for (int rank = 1; rank < nranks_; ++rank) {
    const int64_t value = input(rank, element);
    switch (op_) {
      case slimecclSum:
      case slimecclAvg: reduced += value; break;
      case slimecclProd: reduced *= value; break;
      case slimecclMax: reduced = std::max(reduced, value); break;
      case slimecclMin: reduced = std::min(reduced, value); break;
      case slimecclNumOps:
      case slimecclMaxRedOp: break;
    }
  }
  // Truncates toward zero, as the library documents for integers; exact for floating point.
  return op_ == slimecclAvg ? reduced / nranks_ : reduced;
}

void ReductionValues::fillInputs(void* data, int rank, size_t firstElement, size_t count) const {
  auto* out = static_cast<uint8_t*>(data);
  for (size_t i = 0; i < count; ++i) storeValue(datatype_, input(rank, firstElement + i), out + i * elementBytes_);
}

std::string ReductionValues::resultMismatch(const void* data, size_t firstElement, size_t count) const {
  std::vector<uint8_t> expected(count * elementBytes_);
  for (size_t i = 0; i < count; ++i)
    storeValue(datatype_, result(firstElement + i), expected.data() + i * elementBytes_);
  const auto* actual = static_cast<const uint8_t*>(data);
  if (count == 0 || std::memcmp(actual, expected.data(), expected.size()) == 0) return {};

  size_t wrong = 0;
  size_t firstWrong = count;
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(actual + i * elementBytes_, expected.data() + i * elementBytes_, elementBytes_) == 0) continue;
    ++wrong;
    firstWrong = std::min(firstWrong, i);
  }
  std::string inputs;
  for (int rank = 0; rank < nranks_; ++rank)
    inputs += concat(rank == 0 ? "" : ", ", input(rank, firstElement + firstWrong));
  return concat("element ", firstWrong, " (", wrong, " of ", count, " wrong) is ",
                elementText(datatype_, actual + firstWrong * elementBytes_), ", expected ",
                elementText(datatype_, expected.data() + firstWrong * elementBytes_), " = ", opName(op_), " of [",
                inputs, "]");
}

}  // namespace slimeccl_test
