// Verbs devices of the live machine through rdma-core: ports with state, link layer, speed and
// GIDs. libibverbs is opened at run time (as NCCL does), so hosts without it or without devices
// simply report none.
#pragma once

#include <string>
#include <vector>

#include "topo/topology.h"

namespace slimeccl {

// The devices found; when there are none, or some could not be queried, *note says why.
std::vector<VerbsDevice> listVerbsDevices(std::string* note);

}  // namespace slimeccl
