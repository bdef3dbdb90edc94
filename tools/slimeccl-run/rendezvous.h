// Where the ranks meet (SLIMECCL_COMM_ID) and the shared secret that
// authenticates them (SLIMECCL_COMM_SECRET).
#pragma once

#include <string>

#include "command_line.h"

namespace slimeccl::run {

struct Rendezvous {
  std::string commId;  // host:port of the bootstrap root hosted by global rank 0
  std::string secret;  // 32 lowercase hex characters
};

// With --master, every node computes the same values; otherwise values
// already in the environment are kept and the rest are freshly made.
Rendezvous chooseRendezvous(const LaunchOptions& options);

}  // namespace slimeccl::run
