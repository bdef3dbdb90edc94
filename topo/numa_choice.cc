#include "topo/numa_choice.h"

#include <fmt/format.h>

#include <algorithm>

namespace slimeccl {

int gpuForLocalRank(const TopoSummary& topo, int localRank) {
  return localRank >= 0 && localRank < static_cast<int>(topo.gpus.size()) ? localRank : -1;
}

NumaChoice homeNumaNode(const TopoSummary& topo, int localRank, int localNranks, int gpu,
                        const std::vector<int>& boundCpus) {
  NumaChoice out;
  if (topo.numaNodes.empty()) {
    out.reason = "the topology shows no NUMA node";
    return out;
  }
  if (gpu >= 0 && gpu < static_cast<int>(topo.gpus.size())) {
    int node = pciNumaNode(topo, topo.gpus[gpu].pci);
    if (node >= 0) return {node, fmt::format("the node of GPU {}", gpu)};
  }
  if (!boundCpus.empty()) {
    int best = -1;
    size_t bestCount = 0;
    for (const NumaNode& node : topo.numaNodes) {
      size_t count = std::count_if(boundCpus.begin(), boundCpus.end(), [&](int cpu) {
        return std::find(node.cpus.begin(), node.cpus.end(), cpu) != node.cpus.end();
      });
      if (count > bestCount) {
        best = node.osIndex;
        bestCount = count;
      }
    }
    if (best >= 0) return {best, "the node holding most of its bound CPUs"};
  }
  int nodes = static_cast<int>(topo.numaNodes.size());
  int ranks = std::max(localNranks, 1);
  int block = std::clamp(localRank, 0, ranks - 1) * nodes / ranks;
  out.node = topo.numaNodes[block].osIndex;
  out.reason = nodes == 1 ? "the only node" : fmt::format("local ranks spread in blocks over {} nodes", nodes);
  return out;
}

}  // namespace slimeccl
