// The placement choices are applied: the socket module and the bootstrap ring listen on the rank's
// NIC (or fall back to the default rule and say why), and the NUMA node used for FIFOs and stream
// workers is the rank's home node only where the live machine has several. Socket cases run
// comm_probe processes, since the topology is read once per process.
#include <gtest/gtest.h>

#include "src/base/error.h"
#include "tests/topo/run_command.h"
#include "topo/interfaces.h"
#include "topo/numa_binding.h"
#include "topo/system_topology.h"

namespace slimeccl::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

CommandResult socketProbe(EnvList env) {
  env.push_back({"SLIMECCL_NET", "socket"});
  env.push_back({"SLIMECCL_DEBUG", "INFO"});
  env.push_back({"SLIMECCL_DEBUG_SUBSYS", "NET"});
  return runCommand(SLIMECCL_COMM_PROBE, {"2"}, env);
}

// The interface the live topology picks for local rank 0 of localNranks; "" when it has no
// address here (the caller skips).
std::string liveNicInterface(int localNranks) {
  RankPlacement placement;
  if (placeThisRank(0, localNranks, "socket", &placement) != slimecclSuccess) return "";
  for (const NetInterface& iface : listInterfaces())
    if (iface.name == placement.device) return iface.name;
  return "";
}

TEST(PlacementUse, SocketListensOnTheRanksNic) {
  std::string device = liveNicInterface(2);
  if (device.empty()) GTEST_SKIP() << "no NIC with an address on this machine fits the socket module";
  CommandResult r = socketProbe({{"SLIMECCL_LOCAL_RANK", "0"}, {"SLIMECCL_LOCAL_NRANKS", "2"}});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_TRUE(contains(r.err, "socket: listening on " + device + " (")) << r.err;
  EXPECT_TRUE(contains(r.err, "the NIC of local rank 0 of 2")) << r.err;
  EXPECT_FALSE(contains(r.err, "by the default rule")) << r.err;
}

TEST(PlacementUse, SocketFallsBackWhenTheNicIsNotHere) {
  // The synthetic host's NICs (ibp149s0, ...) do not exist on this machine.
  CommandResult r =
      socketProbe({{"SLIMECCL_TOPO_FILE", std::string(SLIMECCL_TOPO_TEST_DATA) + "/two_sockets_8gpu_4nic.xml"}});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_TRUE(contains(r.err, "by the default rule: its NIC's interface ibp")) << r.err;
  EXPECT_TRUE(contains(r.err, "has no usable address on this machine")) << r.err;
  EXPECT_FALSE(contains(r.err, "the NIC of local rank")) << r.err;
}

TEST(PlacementUse, SocketIfnameStillDecides) {
  CommandResult r = socketProbe({{"SLIMECCL_SOCKET_IFNAME", "lo"}});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_FALSE(contains(r.err, "socket: listening on")) << r.err;
}

TEST(PlacementUse, OutOfRangeLocalRankFallsBack) {
  CommandResult r = socketProbe({{"SLIMECCL_LOCAL_RANK", "3"}, {"SLIMECCL_LOCAL_NRANKS", "2"}});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "by the default rule: topology: local rank 3 of 2 is out of range")) << r.err;
}

TEST(PlacementUse, ListenInterfaceFollowsTheIfnameWhenSet) {
  setenv("SLIMECCL_SOCKET_IFNAME", "lo", 1);
  NetInterface iface;
  slimecclResult_t rc = listenInterface(0, &iface);
  unsetenv("SLIMECCL_SOCKET_IFNAME");
  ASSERT_EQ(rc, slimecclSuccess) << threadError();
  EXPECT_EQ(iface.name, "lo");
}

TEST(PlacementUse, HomeNodeIsUsedOnlyWithSeveralNodes) {
  const TopoSummary* topo = nullptr;
  ASSERT_EQ(systemTopology(&topo), slimecclSuccess) << threadError();
  int node = homeNumaNodeToUse();
  if (topo->numaNodes.size() < 2) {
    EXPECT_EQ(node, -1) << "one NUMA node: FIFOs and workers are left where they are";
    return;
  }
  RankPlacement placement;
  ASSERT_EQ(placeThisRank(0, 1, "socket", &placement), slimecclSuccess) << threadError();
  EXPECT_EQ(node, placement.numa.node);
  EXPECT_EQ(bindThreadToNumaNode(node), slimecclSuccess) << threadError();
}

TEST(PlacementUse, ShmCarriesACollectiveWithThePlacement) {
  // Four thread ranks on this host: shm FIFOs, placed on the receiver's node where there are
  // several, carry an AllGather.
  CommandResult r = runCommand(SLIMECCL_COMM_PROBE, {"4"}, {});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "ok\n");
}

}  // namespace
}  // namespace slimeccl::test
