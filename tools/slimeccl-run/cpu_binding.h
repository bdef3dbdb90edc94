// Which CPU each local rank is bound to (--bind).
#pragma once

#include <vector>

#include "command_line.h"

namespace slimeccl::run {

// The CPUs this launcher may run on, in order.
std::vector<int> allowedCpus();

// The CPUs local ranks take in turn (rank i: entry i mod size), or empty when ranks stay unbound:
// --bind none, or the automatic choice with more local ranks than allowed CPUs.
std::vector<int> rankCpus(const LaunchOptions& options);

}  // namespace slimeccl::run
