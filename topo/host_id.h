// Host identity: ranks with the same identity share memory (shm); others talk over the network.
#pragma once

#include <cstdint>
#include <string>

namespace slimeccl {

// SLIMECCL_HOSTID when set, else "hostname:boot-id:netns" (distinct containers on one kernel share
// a boot id but not a hostname or network namespace; two machines share neither).
std::string hostIdentity();

}  // namespace slimeccl
