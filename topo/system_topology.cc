#include "topo/system_topology.h"

#include <sched.h>

#include <mutex>
#include <string>

#include "src/base/error.h"
#include "src/base/log.h"
#include "src/base/param.h"
#include "topo/topology_loader.h"

namespace slimeccl {

slimecclResult_t systemTopology(const TopoSummary** out) {
  static std::once_flag once;
  static TopoSummary topo;
  static slimecclResult_t result = slimecclSuccess;
  static std::string error;
  std::call_once(once, [] {
    result = loadTopology(topoSourceFromEnv(), &topo);
    if (result != slimecclSuccess) error = threadError();
  });
  if (result != slimecclSuccess) return setError(result, error);
  *out = &topo;
  return slimecclSuccess;
}

std::vector<int> boundCpus(const TopoSummary& topo) {
  if (!topo.live) return {};
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  if (static_cast<int>(cpus.size()) >= topo.hardwareThreads) return {};
  return cpus;
}

slimecclResult_t placeThisRank(int localRank, int localNranks, const std::string& module, RankPlacement* out) {
  const TopoSummary* topo = nullptr;
  SLIMECCL_CHECK(systemTopology(&topo));
  if (localRank < 0 || localNranks < 1 || localRank >= localNranks)
    return fail(slimecclInvalidArgument, "topology: local rank {} of {} is out of range", localRank, localNranks);
  std::vector<NicCandidate> candidates =
      nicCandidates(*topo, module, envString("SLIMECCL_IB_HCA"), envString("SLIMECCL_SOCKET_IFNAME"));
  RankPlacementRequest request;
  request.localRank = localRank;
  request.localNranks = localNranks;
  request.boundCpus = boundCpus(*topo);
  *out = placeLocalRank(*topo, candidates, request);
  return slimecclSuccess;
}

void thisLocalRank(int* localRank, int* localNranks) {
  *localRank = static_cast<int>(envInt("SLIMECCL_LOCAL_RANK", 0));
  *localNranks = static_cast<int>(envInt("SLIMECCL_LOCAL_NRANKS", 1));
}

slimecclResult_t listenInterface(int rank, NetInterface* out) {
  std::string spec = envString("SLIMECCL_SOCKET_IFNAME");
  if (!spec.empty()) return selectInterface(spec, out);
  int localRank = 0, localNranks = 1;
  thisLocalRank(&localRank, &localNranks);
  RankPlacement placement;
  std::string why;
  if (placeThisRank(localRank, localNranks, "socket", &placement) != slimecclSuccess) {
    why = threadError();
    clearThreadError();
  } else if (placement.device.empty()) {
    why = "no NIC fits local rank " + std::to_string(localRank);
  } else {
    for (const NetInterface& iface : listInterfaces())
      if (iface.name == placement.device) {
        *out = iface;
        SLIMECCL_INFO(kLogNet | kLogTopo, rank, "socket: listening on {} ({}), the NIC of local rank {} of {}",
                      iface.name, iface.addr.toString(), localRank, localNranks);
        return slimecclSuccess;
      }
    why = "its NIC's interface " + placement.device + " has no usable address on this machine";
  }
  SLIMECCL_CHECK(selectInterface("", out));
  SLIMECCL_INFO(kLogNet | kLogTopo, rank, "socket: listening on {} ({}) by the default rule: {}", out->name,
                out->addr.toString(), why);
  return slimecclSuccess;
}

int homeNumaNodeToUse() {
  static const int node = [] {
    const TopoSummary* topo = nullptr;
    if (systemTopology(&topo) != slimecclSuccess) {
      clearThreadError();
      return -1;
    }
    if (!topo->live || topo->numaNodes.size() < 2) return -1;
    int localRank = 0, localNranks = 1;
    thisLocalRank(&localRank, &localNranks);
    RankPlacement placement;
    if (placeThisRank(localRank, localNranks, "socket", &placement) != slimecclSuccess) {
      clearThreadError();
      return -1;
    }
    return placement.numa.node;
  }();
  return node;
}

}  // namespace slimeccl
