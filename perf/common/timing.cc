#include "common/timing.h"

#include <algorithm>
#include <numeric>

namespace slimeccl_perf {

double combineRankTimes(std::span<const double> perRankSeconds, TimeAverage mode) {
  switch (mode) {
    case TimeAverage::Rank0:
      return perRankSeconds.front();
    case TimeAverage::Min:
      return *std::min_element(perRankSeconds.begin(), perRankSeconds.end());
    case TimeAverage::Max:
      return *std::max_element(perRankSeconds.begin(), perRankSeconds.end());
    case TimeAverage::Mean:
      break;
  }
  return std::accumulate(perRankSeconds.begin(), perRankSeconds.end(), 0.0) /
         static_cast<double>(perRankSeconds.size());
}

}  // namespace slimeccl_perf
