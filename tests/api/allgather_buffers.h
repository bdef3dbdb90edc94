// The buffers of one AllGather on one rank, filled and checked against per-rank patterns.
#pragma once

#include <slimeccl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "buffers.h"

namespace slimeccl_test {

class AllGatherBuffers {
 public:
  // `patternRank` names the data this rank contributes: its rank in the communicator, or
  // another numbering a test wants to trace (the parent rank after a split). In place, the send
  // block is the rank's own block of the receive buffer, as the API defines it.
  AllGatherBuffers(int rank, int nranks, size_t count, slimecclDataType_t datatype, bool inPlace, uint64_t seed,
                   int patternRank);
  AllGatherBuffers(int rank, int nranks, size_t count, slimecclDataType_t datatype, bool inPlace, uint64_t seed)
      : AllGatherBuffers(rank, nranks, count, datatype, inPlace, seed, rank) {}

  const void* sendbuff() const;
  void* recvbuff() { return recv_.data(); }
  size_t count() const { return count_; }
  slimecclDataType_t datatype() const { return datatype_; }

  // Throws RankFailure unless block j holds the data of patternRanks[j], an out-of-place send
  // block is unchanged and no guard byte was touched.
  void verify(const std::vector<int>& patternRanks) const;
  // Block j holds the data of rank j.
  void verify() const;

  // E.g. "AllGather of 13 x int32 in place".
  std::string describe() const;

 private:
  int nranks_;
  size_t count_;
  slimecclDataType_t datatype_;
  bool inPlace_;
  uint64_t seed_;
  int patternRank_;
  size_t blockBytes_;
  GuardedBuffer recv_;
  std::optional<GuardedBuffer> send_;
  int rank_;
};

}  // namespace slimeccl_test
