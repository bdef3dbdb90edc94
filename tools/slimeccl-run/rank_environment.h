// The environment a rank is started with.
#pragma once

#include <string>
#include <vector>

#include "command_line.h"
#include "rendezvous.h"

namespace slimeccl::run {

// The launcher's own environment with the SLIMECCL_ rank variables replaced
// by this rank's values, as "NAME=value" entries.
std::vector<std::string> rankEnvironment(const LaunchOptions& options, const Rendezvous& rendezvous, int localRank);

}  // namespace slimeccl::run
