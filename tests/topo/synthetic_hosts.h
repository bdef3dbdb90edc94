// The hosts of tests/topo/data, loaded as SLIMECCL_TOPO_FILE would load them:
//   two_sockets_8gpu_4nic.xml  2 packages x (1 NUMA node, 2 host bridges, each with a PCIe switch
//                              holding 2 H100 GPUs and 1 ConnectX-6 with an ACTIVE port); an
//                              NVSwitch (NVIDIA, not a GPU) and 2 NVMe drives besides
//   single_numa_1gpu_2nic.xml  1 NUMA node; an onboard NIC on the host bridge, and a switch with
//                              an RTX 4090 (no CUDA OS device; its audio function besides) and a
//                              ConnectX-5 whose verbs port is DOWN; I/O attached to the machine
//   no_nic_2numa.xml           1 package with 2 NUMA nodes and an NVMe drive, no NIC
//   h200_vm_recorded.xml       not synthetic: SLIMECCL_TOPO_DUMP_FILE of a 16-core VM with one
//                              H200 and a virtio NIC on the host bridge, without PCI names
#pragma once

#include <string>

#include "topo/topology.h"

namespace slimeccl::test {

constexpr const char* kTwoSockets = "two_sockets_8gpu_4nic.xml";
constexpr const char* kSingleNuma = "single_numa_1gpu_2nic.xml";
constexpr const char* kNoNic = "no_nic_2numa.xml";
constexpr const char* kRecordedH200Vm = "h200_vm_recorded.xml";

std::string syntheticHostPath(const std::string& file);
// Fails the current test when the file does not load.
TopoSummary loadSyntheticHost(const std::string& file);
// Index of the NIC or PCI device with that name / bus id; -1 when absent.
int nicIndex(const TopoSummary& topo, const std::string& name);
int pciIndex(const TopoSummary& topo, const std::string& busId);

}  // namespace slimeccl::test
