// How the per-rank average iteration times become the one time a row prints (nccl-tests' -a).
#pragma once

#include <span>
#include <vector>

namespace slimeccl_perf {

enum class TimeAverage { Rank0 = 0, Mean = 1, Min = 2, Max = 3 };

// perRankSeconds is indexed by rank and not empty.
double combineRankTimes(std::span<const double> perRankSeconds, TimeAverage mode);

// The middle sample (the mean of the middle two for an even count); samples is not empty and
// comes back sorted.
double medianOf(std::vector<double>& samples);

}  // namespace slimeccl_perf
