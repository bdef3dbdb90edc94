// How far apart two PCI devices are: the hops between them in the topology tree and a class in
// the words of `nvidia-smi topo -m` and NCCL, from closest to farthest.
#pragma once

#include <string>

#include "topo/topology.h"

namespace slimeccl {

enum class PathClass : unsigned char {
  Pix = 0,   // through at most one PCIe switch
  Pxb = 1,   // through several PCIe bridges, not the host bridge
  Phb = 2,   // through a PCIe host bridge (the CPU's root complex)
  Node = 3,  // between host bridges of one NUMA node
  Sys = 4,   // across NUMA nodes or sockets, or locality unknown
};

struct PciPath {
  PathClass pathClass = PathClass::Sys;
  int hops = 0;  // edges of the tree between the two devices
};

// The path between two devices of one topology.
PciPath pciPath(const PciDevice& a, const PciDevice& b);
const char* pathClassName(PathClass pathClass);

}  // namespace slimeccl
