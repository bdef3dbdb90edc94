// --sweep: ring against halving-doubling for AllGather and AllReduce, from 2 to 4096 ranks, as
// markdown tables (the ones in docs/algorithms.md).
#pragma once

#include "tools/slimeccl-sim/alpha_beta.h"

namespace slimeccl::sim {

inline constexpr int kMaxSweepRanks = 4096;

// Prints the tables; returns 0, or 1 when some schedules could not run.
int runSweep(const CostModel& cost);

}  // namespace slimeccl::sim
