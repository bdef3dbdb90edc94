// The topology this process runs with, discovered once per process from SLIMECCL_TOPO_FILE or the
// live machine (and dumped to SLIMECCL_TOPO_DUMP_FILE), and what it implies for this rank.
#pragma once

#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "topo/interfaces.h"
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
slimecclResult_t placeThisRank(int localRank, int localNranks, const std::string& module, RankPlacement* out);

// This process's local rank: SLIMECCL_LOCAL_RANK of SLIMECCL_LOCAL_NRANKS when set, else 0 of 1.
void thisLocalRank(int* localRank, int* localNranks);

// Where the socket module and the bootstrap ring listen. SLIMECCL_SOCKET_IFNAME set: the interface
// it selects. Unset: the interface of this local rank's NIC for 'socket', else (no topology, no
// NIC, or the NIC's interface has no usable address here) the default rule, said at INFO.
slimecclResult_t listenInterface(int rank, NetInterface* out);

// This local rank's home NUMA node when the live machine has more than one node; -1 otherwise
// (one node, or a topology read from a file, whose node numbers say nothing about this machine).
int homeNumaNodeToUse();

}  // namespace slimeccl
