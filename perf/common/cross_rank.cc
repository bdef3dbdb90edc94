#include "common/cross_rank.h"

#include <unistd.h>

#include <array>
#include <cstring>

namespace slimeccl_perf {
namespace {

// Fixed-size form of RankDescription, so it can travel in one AllGather.
struct RankRecord {
  int32_t rank;
  int32_t pid;
  std::array<char, 120> host;
};

}  // namespace

double combineTimeAcrossRanks(RankComm& rankComm, double seconds, TimeAverage mode) {
  const std::vector<double> perRank = gatherFromAllRanks(rankComm, seconds);
  return combineRankTimes(perRank, mode);
}

std::vector<RankDescription> describeAllRanks(RankComm& rankComm) {
  RankRecord mine{rankComm.rank(), static_cast<int32_t>(getpid()), {}};
  if (gethostname(mine.host.data(), mine.host.size() - 1) != 0) std::strcpy(mine.host.data(), "unknown");
  std::vector<RankDescription> ranks;
  for (const RankRecord& record : gatherFromAllRanks(rankComm, mine)) {
    const size_t hostLength = strnlen(record.host.data(), record.host.size());
    ranks.push_back({record.rank, record.pid, std::string(record.host.data(), hostLength)});
  }
  return ranks;
}

}  // namespace slimeccl_perf
