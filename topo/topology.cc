#include "topo/topology.h"

#include <fmt/format.h>

#include <algorithm>

namespace slimeccl {

const VerbsDevice* findVerbsDevice(const TopoSummary& topo, const std::string& name) {
  for (const VerbsDevice& device : topo.verbs)
    if (device.name == name) return &device;
  return nullptr;
}

int pciNumaNode(const TopoSummary& topo, int pciIndex) {
  if (pciIndex < 0 || pciIndex >= static_cast<int>(topo.pci.size())) return -1;
  return topo.pci[pciIndex].numaNode;
}

double nicSpeedGbps(const TopoSummary& topo, const Nic& nic) {
  double best = 0;
  for (const Netdev& netdev : nic.netdevs) best = std::max(best, netdev.speedMbps / 1000.0);
  for (const std::string& name : nic.verbs)
    if (const VerbsDevice* device = findVerbsDevice(topo, name))
      for (const VerbsPort& port : device->ports) best = std::max(best, port.gbps);
  return best;
}

std::string pciDescription(const PciDevice& device) {
  std::string names = device.vendorName.empty() || device.deviceName.empty()
                          ? device.vendorName + device.deviceName
                          : device.vendorName + " " + device.deviceName;
  return names.empty() ? fmt::format("PCI {:04x}:{:04x}", device.vendorId, device.deviceId) : names;
}

std::string cpuRanges(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + (i == j ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]));
    i = j + 1;
  }
  return out;
}

const char* verbsPortStateName(int state) {
  switch (state) {
    case 0: return "NOP";
    case kVerbsPortDown: return "DOWN";
    case 2: return "INIT";
    case 3: return "ARMED";
    case kVerbsPortActive: return "ACTIVE";
    case 5: return "ACTIVE_DEFER";
    default: return "UNKNOWN";
  }
}

}  // namespace slimeccl
