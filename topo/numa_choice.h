// Which GPU and which NUMA node belong to a local rank. The NUMA node is where the rank's staging
// buffers and FIFOs should live and where its progress thread should run.
#pragma once

#include <string>
#include <vector>

#include "topo/topology.h"

namespace slimeccl {

// GPU i serves local rank i (one rank per GPU, in bus id order as CUDA_DEVICE_ORDER=PCI_BUS_ID
// numbers them); ranks beyond the GPU count have none: -1.
int gpuForLocalRank(const TopoSummary& topo, int localRank);

struct NumaChoice {
  int node = -1;  // OS index; -1 when the topology has no NUMA node
  std::string reason;
};

// In order: the node of the rank's GPU; the node holding most of the rank's bound CPUs; else
// local ranks spread over the nodes in blocks (ranks 0..k-1 on the first node, ...), so that ring
// neighbours share a node.
NumaChoice homeNumaNode(const TopoSummary& topo, int localRank, int localNranks, int gpu,
                        const std::vector<int>& boundCpus);

}  // namespace slimeccl
