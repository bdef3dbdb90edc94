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

uint64_t element_hash(uint64_t seed, int rank, size_t element) {
  return mix(seed * 0xD6E8FEB86659FD93ull + static_cast<uint64_t>(element) * 0x9E3779B97F4A7C15ull +
             static_cast<uint64_t>(rank) * 0xC2B2AE3D27D4EB4Full);
}

int64_t positive_modulo(int64_t value, int64_t modulus) { return ((value % modulus) + modulus) % modulus; }

}  // namespace

const char* op_name(slimecclRedOp_t op) {
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
    : datatype_(datatype), op_(op), nranks_(nranks), seed_(seed), element_bytes_(datatype_size(datatype)) {
  RANK_CHECK(nranks >= 1 && nranks <= kSumBudget, "inputs are exact for 1..", kSumBudget, " ranks, not ", nranks);
}

int64_t ReductionValues::additive_input(uint64_t hash) const {
  const int64_t span = kSumBudget / nranks_;
  const int64_t value = static_cast<int64_t>(hash % static_cast<uint64_t>(span + 1));
  return is_unsigned_integer(datatype_) ? value : value - span / 2;
}

int64_t ReductionValues::input(int rank, size_t element) const {
  const uint64_t hash = element_hash(seed_, rank, element);
  switch (op_) {
    case slimecclSum: return additive_input(hash);
    case slimecclAvg: {
      if (!is_floating_point(datatype_) || rank != nranks_ - 1) return additive_input(hash);
      int64_t others = 0;
      for (int other = 0; other < rank; ++other) others += additive_input(element_hash(seed_, other, element));
      const int64_t own = additive_input(hash);
      return own - positive_modulo(others + own, nranks_);
    }
    case slimecclProd: {
      const bool two = rank < kMaxRanksWithFactorTwo && (static_cast<uint64_t>(rank) + element + seed_) % 3 == 0;
      const bool negative = !is_unsigned_integer(datatype_) && ((hash >> 40) & 1) != 0;
      return (two ? 2 : 1) * (negative ? -1 : 1);
    }
    case slimecclMax:
    case slimecclMin: {
      const int64_t value = static_cast<int64_t>(hash % (kExtremeSpan + 1));
      return is_unsigned_integer(datatype_) ? value : value - kExtremeSpan / 2;
    }
    case slimecclNumOps:
    case slimecclMaxRedOp: break;
  }
  fail_rank(__FILE__, __LINE__, concat("no such op: ", static_cast<int>(op_)));
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

void ReductionValues::fill_inputs(void* data, int rank, size_t first_element, size_t count) const {
  auto* out = static_cast<uint8_t*>(data);
  for (size_t i = 0; i < count; ++i) store_value(datatype_, input(rank, first_element + i), out + i * element_bytes_);
}

std::string ReductionValues::result_mismatch(const void* data, size_t first_element, size_t count) const {
  std::vector<uint8_t> expected(count * element_bytes_);
  for (size_t i = 0; i < count; ++i)
    store_value(datatype_, result(first_element + i), expected.data() + i * element_bytes_);
  const auto* actual = static_cast<const uint8_t*>(data);
  if (count == 0 || std::memcmp(actual, expected.data(), expected.size()) == 0) return {};

  size_t wrong = 0;
  size_t first_wrong = count;
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(actual + i * element_bytes_, expected.data() + i * element_bytes_, element_bytes_) == 0) continue;
    ++wrong;
    first_wrong = std::min(first_wrong, i);
  }
  std::string inputs;
  for (int rank = 0; rank < nranks_; ++rank)
    inputs += concat(rank == 0 ? "" : ", ", input(rank, first_element + first_wrong));
  return concat("element ", first_wrong, " (", wrong, " of ", count, " wrong) is ",
                element_text(datatype_, actual + first_wrong * element_bytes_), ", expected ",
                element_text(datatype_, expected.data() + first_wrong * element_bytes_), " = ", op_name(op_), " of [",
                inputs, "]");
}

}  // namespace slimeccl_test
