// Everything slimeccl-info shows, gathered once and printed as text or JSON.
#pragma once

#include <string>
#include <vector>

#include "include/slimeccl.h"
#include "tools/slimeccl-info/command_line.h"
#include "tools/slimeccl-info/tuner_table.h"
#include "topo/gdr_choice.h"
#include "topo/pci_path.h"
#include "topo/rank_placement.h"
#include "topo/topology.h"
#include "topo/net_choice.h"

namespace slimeccl::info {

struct GpuNicPath {
  int gpu;
  int nic;
  PciPath path;
};

struct InfoReport {
  std::string version;       // "0.1.0"
  std::string hostIdentity;  // what decides shm vs network between ranks
  TopoSummary topo;
  std::vector<GpuNicPath> gpuNicPaths;
  NetPlan nets;
  std::string socketInterface;  // the interface bootstrap and sockets use here, or why none
  int localRanks = 1;
  std::string localRanksSource;
  std::vector<RankPlacement> placements;
  std::vector<GdrChoice> gdr;             // per placement: device buffers to other hosts by GPUDirect RDMA or staging
  std::vector<TunerLine> tuner;           // first match wins, overrides first
  std::vector<GpuChoiceLine> gpuChoices;  // first match wins
};

slimecclResult_t gatherReport(const Options& options, InfoReport* out);

}  // namespace slimeccl::info
