// Inputs of a reduction across ranks, and its exact result, chosen so that every result is
// exact in every datatype and the library's output can be compared bit for bit:
//  - sum, avg: small integers whose sum stays within int8/uint8 (and so within bfloat16's
//    exact integers); integer avg is the sum divided with truncation toward zero, as C does;
//    for floating-point types one rank's input makes the sum a multiple of nranks, so the
//    average is an integer whatever the rounding mode of the division;
//  - prod: factors of magnitude 1 or 2 (negative in signed types), few of them 2;
//  - max, min: integers in [-60, 60] (signed) or [0, 120] (unsigned).
// Each element's inputs depend on (seed, rank, element index), so data left over from an earlier
// call, or a block reduced into the wrong place, shows up.
#pragma once

#include <slimeccl.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace slimeccl_test {

class ReductionValues {
 public:
  ReductionValues(slimecclDataType_t datatype, slimecclRedOp_t op, int nranks, uint64_t seed);

  // The input of `rank` at `element` (an index into the whole vector being reduced).
  int64_t input(int rank, size_t element) const;
  // The reduction of every rank's input at `element`.
  int64_t result(size_t element) const;

  // Writes `count` inputs of `rank`, elements firstElement.., as elements of the datatype.
  void fillInputs(void* data, int rank, size_t firstElement, size_t count) const;

  // Empty when `data` holds the results of elements firstElement.. bit for bit; otherwise names
  // the first wrong element with its value, the expected value and every rank's input there,
  // and how many elements are wrong.
  std::string resultMismatch(const void* data, size_t firstElement, size_t count) const;

 private:
  int64_t additiveInput(uint64_t hash) const;

  slimecclDataType_t datatype_;
  slimecclRedOp_t op_;
  int nranks_;
  uint64_t seed_;
  size_t elementBytes_;
};

const char* opName(slimecclRedOp_t op);

inline constexpr slimecclRedOp_t kAllOps[] = {slimecclSum, slimecclProd, slimecclMax, slimecclMin, slimecclAvg};

}  // namespace slimeccl_test
