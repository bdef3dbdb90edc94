// The topology this process runs with, discovered once per process from SLIMECCL_TOPO_FILE or the
// live machine (and dumped to SLIMECCL_TOPO_DUMP_FILE), and what it implies for this rank.
#pragma once

#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "topo/rank_placement.h"
#include "topo/topology.h"

namespace slimeccl {

// Later calls return the first call's result, failure included (with its sentence).
slimecclResult_t systemTopology(const TopoSummary** out);

// The CPUs the calling thread may run on, when that is fewer than the topology's; else empty.
// Always empty for a topology read from a file: a binding on this machine says nothing there.
std::vector<int> boundCpus(const TopoSummary& topo);

// GPU, home NUMA node and NIC of a local rank for the module that serves peers on other hosts
// ("ib" or "socket"), with SLIMECCL_IB_HCA and SLIMECCL_SOCKET_IFNAME applied; the calling
// thread's CPU binding counts when the rank has no GPU.
slimecclResult_t placeThisRank(int localRank, int localNranks, const std::string& transport, RankPlacement* out);

}  // namespace slimeccl
