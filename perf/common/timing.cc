#include "common/timing.h"

#include <algorithm>
#include <numeric>

namespace slimeccl_perf {

double combineRankTimes(std::span<const double> perRankSeconds, TimeAverage mode) {
  switch (mode) {
    case TimeAverage::Rank0: return perRankSeconds.front();
    case TimeAverage::Min: return *std::min_element(perRankSeconds.begin(), perRankSeconds.end());
    case TimeAverage::Max: return *std::max_element(perRankSeconds.begin(), perRankSeconds.end());
    case TimeAverage::Mean: break;
  }
  return std::accumulate(perRankSeconds.begin(), perRankSeconds.end(), 0.0) /
         static_cast<double>(perRankSeconds.size());
}

double medianOf(std::vector<double>& samples) {
  std::sort(samples.begin(), samples.end());
  const size_t middle = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[middle] : (samples[middle - 1] + samples[middle]) / 2.0;
}

}  // namespace slimeccl_perf
