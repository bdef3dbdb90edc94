// The net module of each peer class of a communicator, from the topology's choice (topo/net_choice.h).
#pragma once

#include "include/slimeccl.h"
#include "net/net.h"
#include "src/bootstrap/wire.h"
#include "src/base/param.h"
#include "topo/topology.h"
#include "topo/net_choice.h"

namespace slimeccl {

// The plan for this process: forcedNet and netPlugin as given, SLIMECCL_IB_HCA from the
// environment, and the ib module probed only when a verbs port is usable. *ib receives that module
// (nullptr when absent or not probed). rank < 0: log lines tied to no rank.
NetPlan liveNetPlan(const TopoSummary& topo, const std::string& forcedNet, const std::string& netPlugin, int rank,
                    NetModule** ib);

// nets[0] serves peers on this host (every peer when params.net forces one module), nets[1]
// peers on other hosts (nullptr when forced). Loads the topology first, so that
// SLIMECCL_TOPO_FILE and SLIMECCL_TOPO_DUMP_FILE act at the first communicator of a process.
slimecclResult_t selectNetModules(const CommParams& params, int rank, NetModule* nets[kPeerClasses]);

}  // namespace slimeccl
