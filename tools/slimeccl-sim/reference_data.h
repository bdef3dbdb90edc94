// What the tool gives each rank and what a correct out-of-place call leaves in its receive buffer.
// Inputs are small non-negative integers, exact in every datatype, chosen so that every reduction
// stays exact whatever order the ranks are combined in (sums within the type's exact integers,
// products of 1s and few enough 2s). The expected results are those inputs reduced in rank order
// with the library's element kernels (algorithms/reduce.h): with exact inputs every order gives the
// same bits, so a difference is the schedule's doing.
#pragma once

#include <cstddef>
#include <vector>

#include "tools/slimeccl-sim/sim_call.h"

namespace slimeccl::sim {

// Buffer sizes of one rank, as algorithms/catalog.h defines them for an out-of-place call; 0 where
// the rank has no such buffer (Broadcast's send off the root, Reduce's receive off the root).
struct RankBufferBytes {
  size_t send = 0;
  size_t recv = 0;
};
RankBufferBytes bufferBytes(const SimCall& call, int rank);

class ReferenceData {
 public:
  explicit ReferenceData(const SimCall& call);

  // Rank `rank`'s send buffer, bufferBytes(rank).send bytes.
  std::vector<char> input(int rank) const;
  // What rank `rank`'s receive buffer must hold after the call, bufferBytes(rank).recv bytes.
  std::vector<char> expected(int rank) const;

 private:
  // `count` elements of rank `rank`'s input from element `first` on.
  std::vector<char> inputElements(int rank, size_t first, size_t count) const;

  SimCall call_;
  // The result every rank shares: the gathered blocks, the root's input, or every rank's input
  // reduced (for ReduceScatter, the whole reduced vector). Empty for AlltoAll.
  std::vector<char> shared_;
};

}  // namespace slimeccl::sim
