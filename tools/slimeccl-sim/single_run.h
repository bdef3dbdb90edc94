// One call: its traffic, its alpha-beta time and, where it is small enough, a data check.
#pragma once

#include "tools/slimeccl-sim/command_line.h"

namespace slimeccl::sim {

// Data is checked on real buffers up to this many ranks and this many buffer bytes in all.
inline constexpr int kMaxCheckedRanks = 1024;
inline constexpr size_t kMaxCheckedBytes = size_t{1} << 30;

// Prints the report; returns the exit status: 0 when the schedules ran (and the data, when checked,
// was right), 1 otherwise.
int runSingle(const Options& options);

}  // namespace slimeccl::sim
