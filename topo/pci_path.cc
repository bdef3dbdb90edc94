#include "topo/pci_path.h"

#include <cstddef>

namespace slimeccl {

PciPath pciPath(const PciDevice& a, const PciDevice& b) {
  // Paths run device-first; walk them from the root end to find the last common ancestor.
  size_t la = a.path.size(), lb = b.path.size(), common = 0;
  while (common < la && common < lb && a.path[la - 1 - common].id == b.path[lb - 1 - common].id) ++common;
  PciPath out;
  out.hops = static_cast<int>((la - common) + (lb - common));
  if (common == 0) return out;  // different machines: nothing to compare
  const TopoNode& meeting = a.path[la - common];
  size_t belowA = la - common, belowB = lb - common;
  switch (meeting.kind) {
    case TopoNodeKind::PciDevice:
    case TopoNodeKind::PciBridge:
      // A switch is an upstream bridge over downstream ports: devices one port below it share it.
      out.pathClass = belowA <= 2 && belowB <= 2 ? PathClass::Pix : PathClass::Pxb;
      break;
    case TopoNodeKind::HostBridge: out.pathClass = PathClass::Phb; break;
    case TopoNodeKind::Cpu:
      out.pathClass = a.numaNode >= 0 && a.numaNode == b.numaNode ? PathClass::Node : PathClass::Sys;
      break;
  }
  return out;
}

const char* pathClassName(PathClass pathClass) {
  switch (pathClass) {
    case PathClass::Pix: return "PIX";
    case PathClass::Pxb: return "PXB";
    case PathClass::Phb: return "PHB";
    case PathClass::Node: return "NODE";
    case PathClass::Sys: return "SYS";
  }
  return "SYS";
}

}  // namespace slimeccl
