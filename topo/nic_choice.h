// Which NIC serves a local rank: the closest one the net module can use, by PCI path to the rank's
// GPU when it has one, else by NUMA locality to its home node; local ranks spread round-robin (by
// local rank) over NICs that are equally close.
#pragma once

#include <string>
#include <vector>

#include "topo/pci_path.h"
#include "topo/topology.h"

namespace slimeccl {

struct NicCandidate {
  int nic = -1;        // index into TopoSummary::nics
  std::string device;  // what the net module opens: a network interface, or "mlx5_0:1"
};

// NICs the module for peers on other hosts can use. ib: NICs with an ACTIVE verbs port that
// SLIMECCL_IB_HCA accepts. socket: NICs whose usable network interface matches
// SLIMECCL_SOCKET_IFNAME (its default rule when empty). Other modules pick their own devices.
std::vector<NicCandidate> nicCandidates(const TopoSummary& topo, const std::string& module, const std::string& ibHca,
                                        const std::string& socketIfname);

struct NicChoice {
  int candidate = -1;  // index into the candidates; -1 when there is none
  PathClass pathClass = PathClass::Sys;
  int hops = 0;  // PCI hops from the GPU; 0 when chosen by NUMA locality
  int tied = 0;  // candidates equally close, the chosen one included
  std::string reason;
};

// gpu: index into TopoSummary::gpus or -1; numaNode: the rank's home node or -1.
NicChoice closestNic(const TopoSummary& topo, const std::vector<NicCandidate>& candidates, int localRank, int gpu,
                     int numaNode);

}  // namespace slimeccl
