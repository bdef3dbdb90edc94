#include "topo/live_details.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "topo/interfaces.h"
#include "topo/verbs_devices.h"

namespace slimeccl {
namespace {

int64_t interfaceSpeedMbps(const std::string& name) {
  std::ifstream in("/sys/class/net/" + name + "/speed");
  int64_t speed = -1;
  if (!(in >> speed) || speed <= 0) return -1;
  return speed;
}

int pciIndexByBusId(const TopoSummary& topo, const std::string& busId) {
  for (int i = 0; i < static_cast<int>(topo.pci.size()); ++i)
    if (!busId.empty() && topo.pci[i].busId == busId) return i;
  return -1;
}

// Puts a verbs device hwloc did not show on the NIC of its PCI function, or on a NIC of its own.
void attachToNic(TopoSummary* topo, const VerbsDevice& device) {
  int pci = pciIndexByBusId(*topo, device.pciBusId);
  for (Nic& nic : topo->nics) {
    if (std::find(nic.verbs.begin(), nic.verbs.end(), device.name) != nic.verbs.end()) return;
    if (pci >= 0 && nic.pci == pci) {
      nic.verbs.push_back(device.name);
      return;
    }
  }
  Nic nic;
  nic.name = device.name;
  nic.pci = pci;
  nic.verbs.push_back(device.name);
  topo->nics.push_back(nic);
}

}  // namespace

void addLiveDetails(TopoSummary* topo) {
  std::vector<VerbsDevice> live = listVerbsDevices(&topo->verbsNote);
  if (!live.empty()) {
    // rdma-core knows more than hwloc's records (link layer, speed, GID types): it wins.
    topo->verbs = live;
    for (const VerbsDevice& device : live) attachToNic(topo, device);
    for (Nic& nic : topo->nics)
      std::erase_if(nic.verbs, [&](const std::string& name) { return findVerbsDevice(*topo, name) == nullptr; });
  } else if (!topo->verbs.empty()) {
    topo->verbsNote = "as hwloc recorded them; rdma-core: " + topo->verbsNote;
  }
  std::set<std::string> addressed;
  for (const NetInterface& iface : listInterfaces()) addressed.insert(iface.name);
  for (Nic& nic : topo->nics)
    for (Netdev& netdev : nic.netdevs) {
      netdev.speedMbps = interfaceSpeedMbps(netdev.name);
      netdev.usable = addressed.count(netdev.name) > 0;
    }
}

}  // namespace slimeccl
