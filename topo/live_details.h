// What hwloc does not say about the live machine: rdma-core's view of verbs devices (link layer,
// speed, GIDs, devices hwloc missed), and the speed and state of each network interface.
#pragma once

#include "topo/topology.h"

namespace slimeccl {

void addLiveDetails(TopoSummary* topo);

}  // namespace slimeccl
