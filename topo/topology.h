// What topology discovery found on one host: packages, NUMA nodes, PCI devices with the path from
// each to the machine root, NICs, GPUs and verbs devices. It is plain data, so every choice made
// from it (net module, NIC, NUMA node) is a pure function that tests feed with synthetic hosts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace slimeccl {

// One step of the path from a PCI device to the machine root.
enum class TopoNodeKind : unsigned char { PciDevice, PciBridge, HostBridge, Cpu };

struct TopoNode {
  uint64_t id;  // unique within one topology (hwloc's gp_index)
  TopoNodeKind kind;
};

struct PciDevice {
  std::string busId;  // domain:bus:device.function, e.g. "0000:17:00.0"
  uint16_t vendorId = 0;
  uint16_t deviceId = 0;
  uint16_t classId = 0;  // base class and subclass, e.g. 0x0207 for InfiniBand
  std::string vendorName;
  std::string deviceName;
  int numaNode = -1;           // OS index; -1 when the device is local to no single node
  int package = -1;            // OS index; -1 when unknown
  std::vector<TopoNode> path;  // the device itself first, then its ancestors up to the machine
};

struct Package {
  int osIndex = 0;
  std::vector<int> cpus;  // OS indexes of its hardware threads
  int cores = 0;
};

struct NumaNode {
  int osIndex = 0;
  int package = -1;
  std::vector<int> cpus;
  uint64_t memoryBytes = 0;
};

struct VerbsGid {
  int index = 0;
  std::string gid;   // "fe80:0000:0000:0000:0202:c9ff:fe00:0001"
  std::string type;  // "RoCE v2", "IB/RoCE v1", or "" when unknown
};

// ibv_port_state values, kept numeric as rdma-core and hwloc report them.
constexpr int kVerbsPortDown = 1;
constexpr int kVerbsPortActive = 4;

struct VerbsPort {
  int number = 1;
  int state = 0;
  std::string linkLayer;  // "InfiniBand", "Ethernet", or "" when unknown (hwloc XML)
  double gbps = 0;        // active speed times width; 0 when unknown
  int lid = 0;
  std::string netdev;          // live RoCE ports: the network interface under it, e.g. "veth-a"
  std::vector<VerbsGid> gids;  // non-zero entries only
};

struct VerbsDevice {
  std::string name;      // "mlx5_0"
  std::string nodeGuid;  // "b8ce:f603:00a1:0000"
  std::string pciBusId;  // live only: the PCI function behind it, "" when none (soft-RoCE)
  std::vector<VerbsPort> ports;
};

struct Netdev {
  std::string name;        // "eth0"
  int64_t speedMbps = -1;  // live only; -1 when unknown
  bool usable = true;      // false when the live machine shows it down or without an IP address
};

// A network adapter: one PCI function with its network interfaces and verbs devices, or a verbs
// device with no PCI device behind it (soft-RoCE).
struct Nic {
  std::string name;  // its first network interface, else its first verbs device
  int pci = -1;      // index into TopoSummary::pci; -1 when not on PCI
  std::vector<Netdev> netdevs;
  std::vector<std::string> verbs;  // names into TopoSummary::verbs
};

struct Gpu {
  int pci = -1;        // index into TopoSummary::pci
  std::string osName;  // "cuda0" when the topology has CUDA OS devices, else ""
  std::string model;   // hwloc's GPU model, else the PCI names or ids
};

struct TopoSummary {
  std::string source;        // "live" or the path of the XML file it came from
  bool live = false;         // the machine this process runs on (bindings and IPs apply)
  std::string hostName;      // as the topology records it
  std::string hwlocVersion;  // of the library that discovered it
  std::vector<Package> packages;
  std::vector<NumaNode> numaNodes;  // by OS index
  int cores = 0;
  int hardwareThreads = 0;
  std::vector<PciDevice> pci;      // by bus id
  std::vector<Nic> nics;           // by bus id; off-PCI ones last
  std::vector<Gpu> gpus;           // by bus id: GPU i is what CUDA_DEVICE_ORDER=PCI_BUS_ID calls i
  std::vector<VerbsDevice> verbs;  // by name
  std::string verbsNote;           // why the verbs list is empty or partial, for reports
};

const VerbsDevice* findVerbsDevice(const TopoSummary& topo, const std::string& name);
// The NUMA node of a NIC or GPU through its PCI device; -1 when unknown.
int pciNumaNode(const TopoSummary& topo, int pciIndex);
// The fastest of a NIC's interfaces and verbs ports in Gb/s; 0 when unknown.
double nicSpeedGbps(const TopoSummary& topo, const Nic& nic);
// "Mellanox Technologies MT28908 Family [ConnectX-6]", or "PCI 15b3:101b" when hwloc had no names.
std::string pciDescription(const PciDevice& device);
// "0-7,16-23" for a sorted list of CPU numbers; "" for none.
std::string cpuRanges(const std::vector<int>& cpus);
// "ACTIVE", "DOWN", ... for an ibv_port_state value.
const char* verbsPortStateName(int state);

}  // namespace slimeccl
