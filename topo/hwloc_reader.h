// Turns a loaded hwloc topology (live or from XML) into a TopoSummary: packages, NUMA nodes,
// cores, PCI devices with their paths, NICs from network and OpenFabrics OS devices (with the
// port states and GIDs hwloc records), and GPUs from CUDA OS devices or NVIDIA display devices.
#pragma once

#include <hwloc.h>

#include "topo/topology.h"

namespace slimeccl {

// Fills every field but source, live and the live-only details (verbs speeds, interface states).
void readHwlocTopology(hwloc_topology_t topology, TopoSummary* out);

}  // namespace slimeccl
