// Values the harness exchanges between all ranks. They travel by slimecclAllGather because the
// library has no AllReduce yet; combineTimeAcrossRanks is the one place to switch to it.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/rank_comm.h"
#include "common/report.h"
#include "common/timing.h"

namespace slimeccl_perf {

// Every rank's `value`, indexed by rank.
template <typename T>
std::vector<T> gatherFromAllRanks(RankComm& rankComm, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> all(static_cast<size_t>(rankComm.nranks()));
  rankComm.allGatherBytes(&value, all.data(), sizeof(T));
  return all;
}

// The per-iteration time a row reports, combined as -a asks (the mean by default, as nccl-tests).
double combineTimeAcrossRanks(RankComm& rankComm, double seconds, TimeAverage mode);

// Rank, pid and host of every rank, for the "Using devices" block.
std::vector<RankDescription> describeAllRanks(RankComm& rankComm);

}  // namespace slimeccl_perf
