#include "topo/hwloc_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

namespace slimeccl {
namespace {

constexpr uint16_t kNvidiaVendor = 0x10de;
constexpr uint16_t kDisplayClass = 0x03;  // base class of VGA, 3D and other display controllers

std::vector<int> cpuList(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  if (set == nullptr) return out;
  unsigned cpu;
  hwloc_bitmap_foreach_begin(cpu, set) out.push_back(static_cast<int>(cpu));
  hwloc_bitmap_foreach_end();
  return out;
}

std::string info(hwloc_obj_t obj, const char* name) {
  const char* value = hwloc_obj_get_info_by_name(obj, name);
  return value != nullptr ? value : "";
}

int packageOf(hwloc_topology_t topology, hwloc_obj_t obj) {
  hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, obj);
  if (obj->type == HWLOC_OBJ_PACKAGE) package = obj;
  if (package != nullptr) return static_cast<int>(package->os_index);
  // Above the packages (I/O attached to the machine, a NUMA node holding several packages):
  // known only when the object's CPUs all sit in one package.
  int found = -1, count = 0;
  for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, p)) != nullptr;) {
    if (obj->cpuset != nullptr && hwloc_bitmap_isincluded(obj->cpuset, p->cpuset)) {
      found = static_cast<int>(p->os_index);
      ++count;
    }
  }
  return count == 1 ? found : -1;
}

TopoNodeKind nodeKind(hwloc_obj_t obj) {
  if (obj->type == HWLOC_OBJ_PCI_DEVICE) return TopoNodeKind::PciDevice;
  if (obj->type == HWLOC_OBJ_BRIDGE)
    return obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST ? TopoNodeKind::HostBridge
                                                                    : TopoNodeKind::PciBridge;
  return TopoNodeKind::Cpu;
}

std::string busIdOf(hwloc_obj_t pciDevice) {
  const auto& attr = pciDevice->attr->pcidev;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", attr.domain, attr.bus, attr.dev, attr.func);
}

PciDevice readPciDevice(hwloc_topology_t topology, hwloc_obj_t obj) {
  const auto& attr = obj->attr->pcidev;
  PciDevice dev;
  dev.busId = busIdOf(obj);
  dev.vendorId = attr.vendor_id;
  dev.deviceId = attr.device_id;
  dev.classId = attr.class_id;
  dev.vendorName = info(obj, "PCIVendor");
  dev.deviceName = info(obj, "PCIDevice");
  hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topology, obj);
  if (local != nullptr && local->nodeset != nullptr && hwloc_bitmap_weight(local->nodeset) == 1)
    dev.numaNode = hwloc_bitmap_first(local->nodeset);
  if (local != nullptr) dev.package = packageOf(topology, local);
  for (hwloc_obj_t o = obj; o != nullptr; o = o->parent) dev.path.push_back({o->gp_index, nodeKind(o)});
  return dev;
}

// hwloc records an OpenFabrics device's ports as infos "Port<N>State", "Port<N>LID",
// "Port<N>GID<I>" (values as sysfs shows them).
VerbsDevice readVerbsInfos(hwloc_obj_t obj) {
  VerbsDevice device;
  device.name = obj->name != nullptr ? obj->name : "";
  device.nodeGuid = info(obj, "NodeGUID");
  std::map<int, VerbsPort> ports;
  for (unsigned i = 0; i < obj->infos_count; ++i) {
    const char* name = obj->infos[i].name;
    const char* value = obj->infos[i].value;
    unsigned port = 0, index = 0;
    char tail[16] = {0};
    if (sscanf(name, "Port%uGID%u", &port, &index) == 2) {
      ports[port].gids.push_back({static_cast<int>(index), value, ""});
    } else if (sscanf(name, "Port%u%15s", &port, tail) == 2) {
      if (strcmp(tail, "State") == 0) ports[port].state = atoi(value);
      if (strcmp(tail, "LID") == 0) ports[port].lid = static_cast<int>(strtol(value, nullptr, 0));
    }
  }
  for (auto& [number, port] : ports) {
    port.number = number;
    device.ports.push_back(port);
  }
  return device;
}

bool isCudaOsDevice(hwloc_obj_t obj) {
  const char* name = obj->name != nullptr ? obj->name : "";
  bool cudaSubtype = obj->subtype != nullptr && strcmp(obj->subtype, "CUDA") == 0;
  return cudaSubtype || strncmp(name, "cuda", 4) == 0 || strncmp(name, "nvml", 4) == 0;
}

// The PCI device an OS device hangs from, as an index into the summary; -1 when off PCI.
int pciIndexOf(const TopoSummary& summary, hwloc_obj_t osdev) {
  hwloc_obj_t parent = osdev->parent;
  if (parent == nullptr || parent->type != HWLOC_OBJ_PCI_DEVICE) return -1;
  std::string busId = busIdOf(parent);
  for (int i = 0; i < static_cast<int>(summary.pci.size()); ++i)
    if (summary.pci[i].busId == busId) return i;
  return -1;
}

Nic& nicFor(std::vector<Nic>& nics, std::map<int, size_t>& byPci, int pciIndex) {
  if (pciIndex >= 0) {
    auto it = byPci.find(pciIndex);
    if (it != byPci.end()) return nics[it->second];
    byPci[pciIndex] = nics.size();
  }
  nics.emplace_back();
  nics.back().pci = pciIndex;
  return nics.back();
}

void readCpuSide(hwloc_topology_t topology, TopoSummary* out) {
  for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, p)) != nullptr;) {
    Package package;
    package.osIndex = static_cast<int>(p->os_index);
    package.cpus = cpuList(p->cpuset);
    package.cores = hwloc_get_nbobjs_inside_cpuset_by_type(topology, p->cpuset, HWLOC_OBJ_CORE);
    out->packages.push_back(package);
  }
  for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, n)) != nullptr;) {
    NumaNode node;
    node.osIndex = static_cast<int>(n->os_index);
    node.package = packageOf(topology, n);
    node.cpus = cpuList(n->cpuset);
    node.memoryBytes = n->attr->numanode.local_memory;
    out->numaNodes.push_back(node);
  }
  std::sort(out->numaNodes.begin(), out->numaNodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.osIndex < b.osIndex; });
  out->cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  out->hardwareThreads = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
}

void readDevices(hwloc_topology_t topology, TopoSummary* out) {
  for (hwloc_obj_t d = nullptr; (d = hwloc_get_next_pcidev(topology, d)) != nullptr;)
    out->pci.push_back(readPciDevice(topology, d));
  std::sort(out->pci.begin(), out->pci.end(), [](const PciDevice& a, const PciDevice& b) { return a.busId < b.busId; });

  std::map<int, size_t> nicByPci;
  std::map<int, hwloc_obj_t> cudaByPci;  // the CUDA OS device of a PCI device ("cuda0" over "nvml0")
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(topology, o)) != nullptr;) {
    int pciIndex = pciIndexOf(*out, o);
    std::string name = o->name != nullptr ? o->name : "";
    switch (o->attr->osdev.type) {
      case HWLOC_OBJ_OSDEV_NETWORK: nicFor(out->nics, nicByPci, pciIndex).netdevs.push_back(Netdev{name}); break;
      case HWLOC_OBJ_OSDEV_OPENFABRICS:
        nicFor(out->nics, nicByPci, pciIndex).verbs.push_back(name);
        out->verbs.push_back(readVerbsInfos(o));
        break;
      case HWLOC_OBJ_OSDEV_COPROC:
      case HWLOC_OBJ_OSDEV_GPU:
        if (pciIndex >= 0 && isCudaOsDevice(o) && (cudaByPci.count(pciIndex) == 0 || name.rfind("cuda", 0) == 0))
          cudaByPci[pciIndex] = o;
        break;
      default: break;
    }
  }
  for (Nic& nic : out->nics) nic.name = !nic.netdevs.empty() ? nic.netdevs[0].name : nic.verbs[0];
  std::stable_sort(out->nics.begin(), out->nics.end(), [&](const Nic& a, const Nic& b) {
    return (a.pci < 0 ? INT32_MAX : a.pci) < (b.pci < 0 ? INT32_MAX : b.pci);
  });
  std::sort(out->verbs.begin(), out->verbs.end(),
            [](const VerbsDevice& a, const VerbsDevice& b) { return a.name < b.name; });

  for (int i = 0; i < static_cast<int>(out->pci.size()); ++i) {
    const PciDevice& dev = out->pci[i];
    bool nvidiaDisplay = dev.vendorId == kNvidiaVendor && (dev.classId >> 8) == kDisplayClass;
    auto cuda = cudaByPci.find(i);
    if (!nvidiaDisplay && cuda == cudaByPci.end()) continue;
    Gpu gpu;
    gpu.pci = i;
    gpu.model = pciDescription(dev);
    if (cuda != cudaByPci.end()) {
      std::string name = cuda->second->name != nullptr ? cuda->second->name : "";
      if (name.rfind("cuda", 0) == 0) gpu.osName = name;
      if (!info(cuda->second, "GPUModel").empty()) gpu.model = info(cuda->second, "GPUModel");
    }
    out->gpus.push_back(gpu);
  }
}

}  // namespace

void readHwlocTopology(hwloc_topology_t topology, TopoSummary* out) {
  hwloc_obj_t root = hwloc_get_root_obj(topology);
  out->hostName = info(root, "HostName");
  out->hwlocVersion = info(root, "hwlocVersion");
  readCpuSide(topology, out);
  readDevices(topology, out);
}

}  // namespace slimeccl
