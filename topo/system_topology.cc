#include "topo/system_topology.h"

#include <sched.h>

#include <mutex>
#include <string>

#include "src/error.h"
#include "src/param.h"
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

slimecclResult_t placeThisRank(int localRank, int localNranks, const std::string& transport, RankPlacement* out) {
  const TopoSummary* topo = nullptr;
  SLIMECCL_CHECK(systemTopology(&topo));
  if (localRank < 0 || localNranks < 1 || localRank >= localNranks)
    return fail(slimecclInvalidArgument, "topology: local rank {} of {} is out of range", localRank, localNranks);
  std::vector<NicCandidate> candidates =
      nicCandidates(*topo, transport, envString("SLIMECCL_IB_HCA"), envString("SLIMECCL_SOCKET_IFNAME"));
  RankPlacementRequest request;
  request.localRank = localRank;
  request.localNranks = localNranks;
  request.boundCpus = boundCpus(*topo);
  *out = placeLocalRank(*topo, candidates, request);
  return slimecclSuccess;
}

}  // namespace slimeccl
