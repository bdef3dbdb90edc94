// Shared by the ReduceScatter, AllReduce, Reduce and reduction-kernel tests: input values whose
// reductions are exact in every datatype, expected results computed without the library's
// kernels, a check of each schedule against the rules of algorithms/schedule.h that a simulation
// cannot see (missing dependencies, reads of bytes nothing wrote), and a driver that builds,
// checks and simulates one call on every rank.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/catalog.h"
#include "algorithms/simulator.h"

namespace slimeccl::reductiontest {

// Rank counts beyond 64 that the tests check: around powers of two, and up to 1024.
std::vector<int> largeRankCounts();

std::vector<slimecclDataType_t> allTypes();
std::vector<slimecclRedOp_t> allOps();
size_t bytesOf(slimecclDataType_t type);

// Reference conversions between doubles and the 16-bit float formats, by exhaustive search of
// the finite values: round to nearest, ties to the even bit pattern, overflow to infinity.
double halfValue(uint16_t bits);
double bfloat16Value(uint16_t bits);
uint16_t nearestHalf(double value);
uint16_t nearestBfloat16(double value);

// The element `value` as `type` stores it (integers wrap; floats round to nearest).
std::vector<char> encode(slimecclDataType_t type, double value);
// A readable form of one stored element, for failure messages.
std::string show(slimecclDataType_t type, const char* element);

// The input of `rank` for element `index`: small integers, chosen per op so that the reduction
// over every rank is exact in every type whatever the order (integer overflow wraps, and the
// expected result wraps the same way).
int64_t inputValue(slimecclDataType_t type, slimecclRedOp_t op, int nranks, int rank, size_t index);
// op over `values` (one per rank) stored as `type`; avg divides the stored sum by the rank count.
std::vector<char> expectedElement(slimecclDataType_t type, slimecclRedOp_t op, const std::vector<int64_t>& values);

// One call of a reducing collective.
struct ReductionCall {
  Coll coll;
  Algo algo;
  int nranks;
  size_t count;  // the collective's count argument (catalog.h)
  slimecclDataType_t type = slimecclInt32;
  slimecclRedOp_t op = slimecclSum;
  int root = 0;
  bool inPlace = false;
};
std::string describe(const ReductionCall& call);

// The first breach of the schedule rules in rank `rank`'s schedule, or "":
//  - no step moves zero bytes; peers are other ranks; dependsOn names an earlier step;
//  - reductions have equal-sized operands that are either the same bytes or disjoint;
//  - two steps touching overlapping bytes, one writing, are ordered by dependsOn chains or by the
//    list order of local steps; a transfer depending on a transfer is only ordered chunk by chunk
//    (when both have the same chunk count, as any chunk size may make them);
//  - every byte read from scratch, or from recv when it does not hold input, was written by a
//    step ordered before the read.
// In place, the Send and Recv buffers alias as catalog.h describes, and the check follows that.
std::string findDependencyBreach(const ReductionCall& call, int rank, const Schedule& schedule);

// Sends from a to b and receives at b from a pair up in list order with equal sizes, or what
// does not match.
std::string findPairingBreach(const std::vector<Schedule>& schedules);

// What one simulated call did.
struct ReductionRun {
  std::vector<Schedule> schedules;
  SimulationResult simulation;
};

// Builds every rank's schedule, checks its rules (when checkRules), simulates the call on exact
// inputs and compares every output element with the independently computed result.
::testing::AssertionResult runReduction(const ReductionCall& call, ReductionRun* run = nullptr, bool checkRules = true);

// `call` with the given type, op and placement.
ReductionCall withTypeOp(ReductionCall call, slimecclDataType_t type, slimecclRedOp_t op, bool inPlace);

// `call` as the large-rank-count tests run it: avg over one-byte integers, which wrap and divide
// by more than their range, in place on every third rank count.
ReductionCall asLargeRankCall(ReductionCall call);

// Every rank's schedule for a zero count at a few rank counts is empty (the root, where the
// collective has one, is the last rank).
::testing::AssertionResult countZeroNeedsNoSteps(Coll coll, Algo algo);

}  // namespace slimeccl::reductiontest
