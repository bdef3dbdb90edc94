// Loading the live machine, dumping it as XML and reading it back; errors for bad files.
#include <gtest/gtest.h>
#include <numa.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "src/base/error.h"
#include "tests/topo/scratch_file.h"
#include "topo/topology_loader.h"

namespace slimeccl::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::string> pciNicNames(const TopoSummary& topo) {
  std::vector<std::string> out;
  for (const Nic& nic : topo.nics)
    if (nic.pci >= 0) out.push_back(nic.name);
  return out;
}

TEST(TopologyLoader, LiveMachineAgreesWithTheKernel) {
  TopoSummary topo;
  ASSERT_EQ(loadTopology(TopoSource{}, &topo), slimecclSuccess) << threadError();
  EXPECT_TRUE(topo.live);
  EXPECT_EQ(topo.source, "live");
  EXPECT_FALSE(topo.hwlocVersion.empty());
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  EXPECT_GE(topo.hardwareThreads, CPU_COUNT(&allowed));
  EXPECT_GE(topo.cores, 1);
  ASSERT_FALSE(topo.numaNodes.empty());
  if (numa_available() >= 0) {
    EXPECT_EQ(static_cast<int>(topo.numaNodes.size()), numa_num_configured_nodes());
  }
  uint64_t memory = 0;
  for (const NumaNode& node : topo.numaNodes) memory += node.memoryBytes;
  EXPECT_GT(memory, 0u);
}

TEST(TopologyLoader, LiveNicsAreThePciInterfacesOfThisMachine) {
  TopoSummary topo;
  ASSERT_EQ(loadTopology(TopoSource{}, &topo), slimecclSuccess) << threadError();
  for (const Nic& nic : topo.nics)
    for (const Netdev& netdev : nic.netdevs) {
      std::string link = "/sys/class/net/" + netdev.name + "/device";
      EXPECT_EQ(access(link.c_str(), F_OK), 0) << netdev.name << " has no device behind it";
    }
}

// Runs where rdma-core has devices (the soft-RoCE VM of ../shared/rxe-vm, RDMA hosts).
TEST(TopologyLoader, LiveVerbsDevicesHavePortsGidsAndANic) {
  TopoSummary topo;
  ASSERT_EQ(loadTopology(TopoSource{}, &topo), slimecclSuccess) << threadError();
  if (topo.verbs.empty()) GTEST_SKIP() << "no verbs device here: " << topo.verbsNote;
  for (const VerbsDevice& device : topo.verbs) {
    EXPECT_FALSE(device.nodeGuid.empty()) << device.name;
    ASSERT_FALSE(device.ports.empty()) << device.name;
    for (const VerbsPort& port : device.ports) {
      if (port.state != kVerbsPortActive) continue;
      EXPECT_FALSE(port.linkLayer.empty()) << device.name;
      EXPECT_GT(port.gbps, 0) << device.name;
      ASSERT_FALSE(port.gids.empty()) << device.name;
      if (port.linkLayer == "Ethernet") {
        EXPECT_FALSE(port.netdev.empty()) << device.name;
      }
      for (const VerbsGid& gid : port.gids) EXPECT_EQ(gid.gid.size(), 39u) << device.name;
    }
    bool onNic = false;
    for (const Nic& nic : topo.nics)
      onNic |= std::find(nic.verbs.begin(), nic.verbs.end(), device.name) != nic.verbs.end();
    EXPECT_TRUE(onNic) << device.name << " belongs to no NIC";
  }
}

TEST(TopologyLoader, DumpThenReloadGivesTheSameHost) {
  ScratchFile dump("topo-dump.xml");
  TopoSummary live, reloaded;
  ASSERT_EQ(loadTopology(TopoSource{"", dump.path()}, &live), slimecclSuccess) << threadError();
  ASSERT_EQ(loadTopology(TopoSource{dump.path(), ""}, &reloaded), slimecclSuccess) << threadError();
  EXPECT_FALSE(reloaded.live);
  EXPECT_EQ(reloaded.source, dump.path());
  EXPECT_EQ(reloaded.hostName, live.hostName);
  EXPECT_EQ(reloaded.cores, live.cores);
  EXPECT_EQ(reloaded.hardwareThreads, live.hardwareThreads);
  ASSERT_EQ(reloaded.numaNodes.size(), live.numaNodes.size());
  for (size_t i = 0; i < live.numaNodes.size(); ++i) {
    EXPECT_EQ(reloaded.numaNodes[i].cpus, live.numaNodes[i].cpus);
    EXPECT_EQ(reloaded.numaNodes[i].memoryBytes, live.numaNodes[i].memoryBytes);
  }
  ASSERT_EQ(reloaded.pci.size(), live.pci.size());
  for (size_t i = 0; i < live.pci.size(); ++i) EXPECT_EQ(reloaded.pci[i].busId, live.pci[i].busId);
  // The dump is hwloc's view: verbs devices only rdma-core saw (soft-RoCE) are not in it.
  EXPECT_EQ(pciNicNames(reloaded), pciNicNames(live));
  EXPECT_EQ(reloaded.gpus.size(), live.gpus.size());
}

TEST(TopologyLoader, MissingFileIsNamed) {
  TopoSummary topo;
  EXPECT_EQ(loadTopology(TopoSource{"/nonexistent/host.xml", ""}, &topo), slimecclInvalidArgument);
  EXPECT_TRUE(contains(threadError(), "SLIMECCL_TOPO_FILE='/nonexistent/host.xml' cannot be read")) << threadError();
}

TEST(TopologyLoader, FileThatIsNotHwlocXmlIsNamed) {
  ScratchFile bad("not-a-topology.xml");
  std::ofstream(bad.path()) << "this is not XML\n";
  TopoSummary topo;
  EXPECT_EQ(loadTopology(TopoSource{bad.path(), ""}, &topo), slimecclInvalidArgument);
  EXPECT_TRUE(contains(threadError(), "is not a valid hwloc XML topology")) << threadError();
}

TEST(TopologyLoader, UnwritableDumpPathIsNamed) {
  TopoSummary topo;
  EXPECT_EQ(loadTopology(TopoSource{"", "/nonexistent/dump.xml"}, &topo), slimecclSystemError);
  EXPECT_TRUE(contains(threadError(), "SLIMECCL_TOPO_DUMP_FILE='/nonexistent/dump.xml'")) << threadError();
}

}  // namespace
}  // namespace slimeccl::test
