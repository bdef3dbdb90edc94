#include "topo/net_selection.h"

#include "src/base/error.h"
#include "topo/system_topology.h"
#include "topo/net_choice.h"

namespace slimeccl {
namespace {

// The ib module when this library has one (built in, or as a plugin); nullptr otherwise.
NetModule* probeIbModule(int rank) {
  NetModule* ib = netModuleByName("ib");
  if (ib == nullptr) {
    SLIMECCL_INFO(kLogInit | kLogTopo, rank, "no ib module: {}", threadError());
    clearThreadError();
  }
  return ib;
}

}  // namespace

NetPlan liveNetPlan(const TopoSummary& topo, const std::string& forcedNet, const std::string& netPlugin, int rank,
                    NetModule** ib) {
  NetRequest request;
  request.forcedNet = forcedNet;
  request.netPlugin = netPlugin;
  request.ibHca = envString("SLIMECCL_IB_HCA");
  *ib = nullptr;
  if (forcedNet.empty() && netPlugin.empty() && !usableVerbsPorts(topo, parseHcaFilter(request.ibHca)).empty()) {
    *ib = probeIbModule(rank);
    request.ibModuleAvailable = *ib != nullptr;
  }
  return chooseNets(topo, request);
}

slimecclResult_t selectNetModules(const CommParams& params, int rank, NetModule* nets[kPeerClasses]) {
  nets[0] = nets[1] = nullptr;
  const TopoSummary* topo = nullptr;
  slimecclResult_t rc = systemTopology(&topo);
  if (rc != slimecclSuccess) {
    prefixThreadError(fmt::format("rank {}: ", rank));
    return rc;
  }
  NetModule* ib = nullptr;
  NetPlan plan = liveNetPlan(*topo, params.net, params.netPlugin, rank, &ib);
  // Only a forced module or a plugin can be missing: shm and socket are built in.
  nets[0] = netModuleByName(plan.sameHost.module);
  if (nets[0] == nullptr) {
    prefixThreadError(fmt::format("rank {}: SLIMECCL_NET/netName '{}': ", rank, plan.sameHost.module));
    return slimecclInvalidArgument;
  }
  if (!params.net.empty()) return slimecclSuccess;
  nets[1] = plan.otherHosts.module == "ib" ? ib : netModuleByName(plan.otherHosts.module);
  if (nets[1] == nullptr) {
    prefixThreadError(fmt::format("rank {}: SLIMECCL_NET_PLUGIN '{}': ", rank, plan.otherHosts.module));
    return slimecclInvalidArgument;
  }
  SLIMECCL_INFO(kLogInit | kLogTopo, rank, "peers on other hosts use '{}': {}", nets[1]->name(),
                plan.otherHosts.reason);
  return slimecclSuccess;
}

}  // namespace slimeccl
