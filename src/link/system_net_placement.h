// The net modules' placement on this machine, from its topology (topo/system_topology.h): the
// NUMA node, interface and device topology gives this process's local rank. Comms hand it to
// the modules through their NetContext.
#pragma once

#include "net/net.h"

namespace slimeccl {

const NetPlacement& systemNetPlacement();

}  // namespace slimeccl
