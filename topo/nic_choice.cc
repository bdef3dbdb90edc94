#include "topo/nic_choice.h"

#include <fmt/format.h>

#include <climits>

#include "topo/hca_filter.h"
#include "topo/interfaces.h"
#include "topo/net_choice.h"

namespace slimeccl {
namespace {

struct Closeness {
  PathClass pathClass;
  int hops;
  bool operator==(const Closeness& other) const = default;
  bool operator<(const Closeness& other) const {
    return pathClass != other.pathClass ? pathClass < other.pathClass : hops < other.hops;
  }
};

int packageOfNode(const TopoSummary& topo, int node) {
  for (const NumaNode& n : topo.numaNodes)
    if (n.osIndex == node) return n.package;
  return -1;
}

Closeness closenessToGpu(const TopoSummary& topo, const Nic& nic, const Gpu& gpu) {
  if (nic.pci < 0 || gpu.pci < 0) return {PathClass::Sys, INT_MAX};
  PciPath path = pciPath(topo.pci[gpu.pci], topo.pci[nic.pci]);
  return {path.pathClass, path.hops};
}

// Same node first, then the same package, then anything else (unknown locality included).
Closeness closenessToNode(const TopoSummary& topo, const Nic& nic, int node) {
  int nicNode = pciNumaNode(topo, nic.pci);
  if (node >= 0 && nicNode == node) return {PathClass::Node, 0};
  int package = packageOfNode(topo, node);
  if (package >= 0 && nicNode >= 0 && packageOfNode(topo, nicNode) == package) return {PathClass::Sys, 1};
  return {PathClass::Sys, 2};
}

}  // namespace

std::vector<NicCandidate> nicCandidates(const TopoSummary& topo, const std::string& module, const std::string& ibHca,
                                        const std::string& socketIfname) {
  std::vector<NicCandidate> out;
  if (module == "ib") {
    std::vector<VerbsPortRef> usable = usableVerbsPorts(topo, parseHcaFilter(ibHca));
    for (int n = 0; n < static_cast<int>(topo.nics.size()); ++n)
      for (const VerbsPortRef& port : usable)
        for (const std::string& verbs : topo.nics[n].verbs)
          if (verbs == port.device) out.push_back({n, fmt::format("{}:{}", port.device, port.port)});
  } else if (module == "socket") {
    std::vector<NetInterface> named;
    for (const Nic& nic : topo.nics)
      for (const Netdev& netdev : nic.netdevs)
        if (netdev.usable) named.push_back(NetInterface{netdev.name, SockAddr()});
    std::vector<NetInterface> matched = matchInterfaces(named, socketIfname);
    for (int n = 0; n < static_cast<int>(topo.nics.size()); ++n)
      for (const Netdev& netdev : topo.nics[n].netdevs)
        for (const NetInterface& iface : matched)
          if (iface.name == netdev.name) out.push_back({n, netdev.name});
  }
  return out;
}

NicChoice closestNic(const TopoSummary& topo, const std::vector<NicCandidate>& candidates, int localRank, int gpu,
                     int numaNode) {
  NicChoice out;
  if (candidates.empty()) {
    out.reason = "no NIC that the net module can use";
    return out;
  }
  bool byGpu = gpu >= 0 && gpu < static_cast<int>(topo.gpus.size()) && topo.gpus[gpu].pci >= 0;
  std::vector<Closeness> closeness;
  for (const NicCandidate& c : candidates) {
    const Nic& nic = topo.nics[c.nic];
    closeness.push_back(byGpu ? closenessToGpu(topo, nic, topo.gpus[gpu]) : closenessToNode(topo, nic, numaNode));
  }
  Closeness best = closeness[0];
  for (const Closeness& c : closeness)
    if (c < best) best = c;
  std::vector<int> tied;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i)
    if (closeness[i] == best) tied.push_back(i);
  out.candidate = tied[localRank % tied.size()];
  out.pathClass = best.pathClass;
  out.hops = byGpu ? best.hops : 0;
  out.tied = static_cast<int>(tied.size());
  std::string spread = tied.size() > 1 ? fmt::format(", round-robin over {} equally close", tied.size()) : "";
  if (byGpu && best.hops != INT_MAX) {
    out.reason =
        fmt::format("closest to GPU {} ({}, {} PCI hops){}", gpu, pathClassName(best.pathClass), best.hops, spread);
  } else if (byGpu) {
    out.reason = fmt::format("no NIC on the PCI tree of GPU {}{}", gpu, spread);
  } else if (best.pathClass == PathClass::Node) {
    out.reason = fmt::format("local to NUMA node {}{}", numaNode, spread);
  } else {
    out.reason = fmt::format("none local to NUMA node {}{}", numaNode, spread);
  }
  return out;
}

}  // namespace slimeccl
