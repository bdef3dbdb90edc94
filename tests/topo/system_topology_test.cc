// This process's topology and the placement of a rank of it, binding included.
#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

#include "src/base/error.h"
#include "topo/system_topology.h"

namespace slimeccl {
namespace {

TEST(SystemTopology, IsLoadedOnceAndLive) {
  const TopoSummary* first = nullptr;
  const TopoSummary* second = nullptr;
  ASSERT_EQ(systemTopology(&first), slimecclSuccess) << threadError();
  ASSERT_EQ(systemTopology(&second), slimecclSuccess) << threadError();
  EXPECT_EQ(first, second);
  EXPECT_TRUE(first->live);
}

TEST(SystemTopology, PlacesARankOfThisProcess) {
  const TopoSummary* topo = nullptr;
  ASSERT_EQ(systemTopology(&topo), slimecclSuccess) << threadError();
  RankPlacement placement;
  ASSERT_EQ(placeThisRank(0, 1, "socket", &placement), slimecclSuccess) << threadError();
  EXPECT_EQ(placement.numa.node, topo->numaNodes.front().osIndex);
  bool socketNic = false;
  for (const Nic& nic : topo->nics)
    for (const Netdev& netdev : nic.netdevs) socketNic |= netdev.usable;
  if (socketNic) {
    EXPECT_GE(placement.nic, 0) << placement.nicChoice.reason;
  }
}

TEST(SystemTopology, RankOutOfRangeIsNamed) {
  RankPlacement placement;
  EXPECT_EQ(placeThisRank(2, 2, "socket", &placement), slimecclInvalidArgument);
  EXPECT_NE(threadError().find("local rank 2 of 2 is out of range"), std::string::npos) << threadError();
}

TEST(SystemTopology, ThreadBindingNarrowerThanTheMachineCounts) {
  const TopoSummary* topo = nullptr;
  ASSERT_EQ(systemTopology(&topo), slimecclSuccess) << threadError();
  if (!boundCpus(*topo).empty()) GTEST_SKIP() << "the test runs bound already";
  if (topo->hardwareThreads < 2) GTEST_SKIP() << "one hardware thread: no binding is narrower";
  int cpu = topo->numaNodes.front().cpus.front();
  std::thread([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
    EXPECT_EQ(boundCpus(*topo), std::vector<int>{cpu});
    RankPlacement placement;
    ASSERT_EQ(placeThisRank(0, 1, "socket", &placement), slimecclSuccess) << threadError();
    EXPECT_EQ(placement.numa.reason, "the node holding most of its bound CPUs");
  }).join();
}

}  // namespace
}  // namespace slimeccl
