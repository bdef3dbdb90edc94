#include "topo/rank_placement.h"

namespace slimeccl {

RankPlacement placeLocalRank(const TopoSummary& topo, const std::vector<NicCandidate>& candidates,
                             const RankPlacementRequest& request) {
  RankPlacement out;
  out.gpu = request.gpu == kGpuByLocalRank ? gpuForLocalRank(topo, request.localRank) : request.gpu;
  out.numa = homeNumaNode(topo, request.localRank, request.localNranks, out.gpu, request.boundCpus);
  out.nicChoice = closestNic(topo, candidates, request.localRank, out.gpu, out.numa.node);
  if (out.nicChoice.candidate >= 0) {
    out.nic = candidates[out.nicChoice.candidate].nic;
    out.device = candidates[out.nicChoice.candidate].device;
  }
  return out;
}

}  // namespace slimeccl
