// What the hwloc reader finds in the synthetic hosts: CPUs, NUMA nodes, PCI devices, NICs with
// their verbs ports, GPUs.
#include <gtest/gtest.h>

#include "tests/topo/synthetic_hosts.h"

namespace slimeccl::test {
namespace {

constexpr uint64_t kGiB = 1ULL << 30;

std::vector<std::string> nicNames(const TopoSummary& topo) {
  std::vector<std::string> out;
  for (const Nic& nic : topo.nics) out.push_back(nic.name);
  return out;
}

TEST(TwoSocketHost, PackagesNumaNodesCoresAndThreads) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  EXPECT_EQ(topo.source, syntheticHostPath(kTwoSockets));
  EXPECT_FALSE(topo.live);
  EXPECT_EQ(topo.hostName, "synthetic-2s-8gpu-4nic");
  ASSERT_EQ(topo.packages.size(), 2u);
  EXPECT_EQ(topo.packages[1].cores, 8);
  EXPECT_EQ(topo.cores, 16);
  EXPECT_EQ(topo.hardwareThreads, 32);
  ASSERT_EQ(topo.numaNodes.size(), 2u);
  EXPECT_EQ(cpuRanges(topo.numaNodes[0].cpus), "0-7,16-23");
  EXPECT_EQ(cpuRanges(topo.numaNodes[1].cpus), "8-15,24-31");
  EXPECT_EQ(topo.numaNodes[0].package, 0);
  EXPECT_EQ(topo.numaNodes[1].package, 1);
  EXPECT_EQ(topo.numaNodes[1].memoryBytes, 256 * kGiB);
}

TEST(TwoSocketHost, EightGpusInBusOrderWithCudaNamesAndNodes) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  ASSERT_EQ(topo.gpus.size(), 8u);
  const char* busIds[] = {"0000:13:00.0", "0000:14:00.0", "0000:23:00.0", "0000:24:00.0",
                          "0000:93:00.0", "0000:94:00.0", "0000:a3:00.0", "0000:a4:00.0"};
  for (int g = 0; g < 8; ++g) {
    const Gpu& gpu = topo.gpus[g];
    EXPECT_EQ(topo.pci[gpu.pci].busId, busIds[g]);
    EXPECT_EQ(gpu.osName, "cuda" + std::to_string(g));
    EXPECT_EQ(gpu.model, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(pciNumaNode(topo, gpu.pci), g < 4 ? 0 : 1);
    EXPECT_EQ(topo.pci[gpu.pci].package, g < 4 ? 0 : 1);
  }
}

TEST(TwoSocketHost, NvidiaDevicesThatAreNotDisplaysAreNotGpus) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  int nvswitch = pciIndex(topo, "0000:10:02.0");
  ASSERT_GE(nvswitch, 0);
  EXPECT_EQ(topo.pci[nvswitch].vendorId, 0x10de);
  EXPECT_EQ(topo.pci[nvswitch].classId, 0x0680);
  for (const Gpu& gpu : topo.gpus) EXPECT_NE(gpu.pci, nvswitch);
}

TEST(TwoSocketHost, FourNicsWithInterfacesAndActiveVerbsPorts) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  EXPECT_EQ(nicNames(topo), (std::vector<std::string>{"ibp21s0", "ibp37s0", "ibp149s0", "ibp165s0"}));
  const char* busIds[] = {"0000:15:00.0", "0000:25:00.0", "0000:95:00.0", "0000:a5:00.0"};
  for (int n = 0; n < 4; ++n) {
    const Nic& nic = topo.nics[n];
    EXPECT_EQ(topo.pci[nic.pci].busId, busIds[n]);
    EXPECT_EQ(topo.pci[nic.pci].classId, 0x0207);
    EXPECT_EQ(pciNumaNode(topo, nic.pci), n < 2 ? 0 : 1);
    ASSERT_EQ(nic.netdevs.size(), 1u);
    EXPECT_TRUE(nic.netdevs[0].usable);
    ASSERT_EQ(nic.verbs, std::vector<std::string>{"mlx5_" + std::to_string(n)});
    const VerbsDevice* device = findVerbsDevice(topo, nic.verbs[0]);
    ASSERT_NE(device, nullptr);
    EXPECT_EQ(device->nodeGuid, "b8ce:f603:00a1:000" + std::to_string(n));
    ASSERT_EQ(device->ports.size(), 1u);
    EXPECT_EQ(device->ports[0].number, 1);
    EXPECT_EQ(device->ports[0].state, kVerbsPortActive);
    EXPECT_EQ(device->ports[0].lid, 0x11 + n);
    ASSERT_EQ(device->ports[0].gids.size(), 1u);
    EXPECT_EQ(device->ports[0].gids[0].gid, "fe80:0000:0000:0000:b8ce:f603:00a1:000" + std::to_string(n));
  }
}

TEST(TwoSocketHost, PciPathsRunFromTheDeviceToTheMachine) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  const PciDevice& gpu0 = topo.pci[topo.gpus[0].pci];
  // GPU, switch downstream port, switch upstream port, root port, host bridge, package, machine.
  ASSERT_EQ(gpu0.path.size(), 7u);
  EXPECT_EQ(gpu0.path[0].kind, TopoNodeKind::PciDevice);
  EXPECT_EQ(gpu0.path[1].kind, TopoNodeKind::PciBridge);
  EXPECT_EQ(gpu0.path[3].kind, TopoNodeKind::PciBridge);
  EXPECT_EQ(gpu0.path[4].kind, TopoNodeKind::HostBridge);
  EXPECT_EQ(gpu0.path[5].kind, TopoNodeKind::Cpu);
}

TEST(SingleNumaHost, GpuFoundByVendorAndClassWithoutCudaDevice) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  ASSERT_EQ(topo.gpus.size(), 1u);
  EXPECT_EQ(topo.pci[topo.gpus[0].pci].busId, "0000:03:00.0");
  EXPECT_EQ(topo.gpus[0].osName, "");
  EXPECT_EQ(topo.gpus[0].model, "NVIDIA Corporation AD102 [GeForce RTX 4090]");
  EXPECT_GE(pciIndex(topo, "0000:03:00.1"), 0) << "the GPU's audio function is a PCI device, not a GPU";
}

TEST(SingleNumaHost, DevicesUnderTheMachineGetTheOnlyNodeAndPackage) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  ASSERT_EQ(topo.numaNodes.size(), 1u);
  EXPECT_EQ(cpuRanges(topo.numaNodes[0].cpus), "0-7");
  EXPECT_EQ(nicNames(topo), (std::vector<std::string>{"eno1", "enp4s0f0np0"}));
  for (const Nic& nic : topo.nics) {
    EXPECT_EQ(pciNumaNode(topo, nic.pci), 0);
    EXPECT_EQ(topo.pci[nic.pci].package, 0);
  }
  EXPECT_TRUE(topo.nics[0].verbs.empty());
}

TEST(SingleNumaHost, DownVerbsPortIsRecordedAsDown) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  const VerbsDevice* device = findVerbsDevice(topo, "mlx5_0");
  ASSERT_NE(device, nullptr);
  ASSERT_EQ(device->ports.size(), 1u);
  EXPECT_EQ(device->ports[0].state, kVerbsPortDown);
  EXPECT_STREQ(verbsPortStateName(device->ports[0].state), "DOWN");
}

TEST(NoNicHost, TwoNodesInOnePackageAndNoNic) {
  TopoSummary topo = loadSyntheticHost(kNoNic);
  ASSERT_EQ(topo.numaNodes.size(), 2u);
  EXPECT_EQ(topo.numaNodes[0].package, 0);
  EXPECT_EQ(topo.numaNodes[1].package, 0);
  EXPECT_EQ(cpuRanges(topo.numaNodes[1].cpus), "4-7,12-15");
  EXPECT_TRUE(topo.nics.empty());
  EXPECT_TRUE(topo.gpus.empty());
  EXPECT_TRUE(topo.verbs.empty());
  EXPECT_FALSE(topo.verbsNote.empty());
  int nvme = pciIndex(topo, "0000:01:00.0");
  ASSERT_GE(nvme, 0);
  EXPECT_EQ(topo.pci[nvme].numaNode, 0);
}

// Recorded with SLIMECCL_TOPO_DUMP_FILE on a GPU VM whose hwloc had no PCI name database.
TEST(RecordedH200Vm, GpuFoundByIdsAndNamedByThem) {
  TopoSummary topo = loadSyntheticHost(kRecordedH200Vm);
  EXPECT_EQ(topo.hardwareThreads, 16);
  ASSERT_EQ(topo.gpus.size(), 1u);
  EXPECT_EQ(topo.pci[topo.gpus[0].pci].busId, "0000:00:06.0");
  EXPECT_EQ(topo.gpus[0].model, "PCI 10de:2335");
  ASSERT_EQ(topo.nics.size(), 1u);
  EXPECT_EQ(topo.nics[0].name, "eth0");
  EXPECT_EQ(pciDescription(topo.pci[topo.nics[0].pci]), "PCI 1af4:1041");
}

TEST(CpuRanges, CollapsesRuns) {
  EXPECT_EQ(cpuRanges({}), "");
  EXPECT_EQ(cpuRanges({3}), "3");
  EXPECT_EQ(cpuRanges({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
}

}  // namespace
}  // namespace slimeccl::test
