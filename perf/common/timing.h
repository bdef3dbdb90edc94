// How the per-rank average iteration times become the one time a row prints (nccl-tests' -a).
#pragma once

#include <span>

namespace slimeccl_perf {

enum class TimeAverage { Rank0 = 0, Mean = 1, Min = 2, Max = 3 };

// perRankSeconds is indexed by rank and not empty.
double combineRankTimes(std::span<const double> perRankSeconds, TimeAverage mode);

}  // namespace slimeccl_perf
