// Which CPUs each local rank is bound to (--bind).
#pragma once

#include <vector>

#include "command_line.h"

namespace slimeccl::run {

// The CPUs this launcher may run on, in order.
std::vector<int> allowedCpus();

// The CPUs each local rank may run on (entry i: local rank i), or empty when ranks stay unbound:
// --bind none, or the automatic choice with more than kAutomaticRanksPerCpu local ranks per CPU.
std::vector<std::vector<int>> rankCpuSets(const LaunchOptions& options);

}  // namespace slimeccl::run
