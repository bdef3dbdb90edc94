// Everything topology decides for one local rank: its GPU, its home NUMA node and its NIC.
#pragma once

#include <string>
#include <vector>

#include "topo/nic_choice.h"
#include "topo/numa_choice.h"
#include "topo/topology.h"

namespace slimeccl {

constexpr int kGpuByLocalRank = -2;

struct RankPlacementRequest {
  int localRank = 0;
  int localNranks = 1;
  int gpu = kGpuByLocalRank;   // an index into TopoSummary::gpus, -1 for none, or by local rank
  std::vector<int> boundCpus;  // the rank's CPU binding; empty when it is not bound
};

struct RankPlacement {
  int gpu = -1;
  NumaChoice numa;
  int nic = -1;        // index into TopoSummary::nics; -1 when no NIC fits
  std::string device;  // what the net module opens on that NIC
  NicChoice nicChoice;
};

RankPlacement placeLocalRank(const TopoSummary& topo, const std::vector<NicCandidate>& candidates,
                             const RankPlacementRequest& request);

}  // namespace slimeccl
