// The home NUMA node of a local rank: its GPU's node, else where its bound CPUs are, else blocks
// of local ranks per node.
#include <gtest/gtest.h>

#include "tests/topo/synthetic_hosts.h"
#include "topo/numa_choice.h"

namespace slimeccl::test {
namespace {

std::vector<int> unboundNodes(const TopoSummary& topo, int localNranks) {
  std::vector<int> out;
  for (int r = 0; r < localNranks; ++r) out.push_back(homeNumaNode(topo, r, localNranks, -1, {}).node);
  return out;
}

TEST(NumaChoice, GpuRanksLiveOnTheirGpusNode) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  for (int r = 0; r < 8; ++r) {
    NumaChoice choice = homeNumaNode(topo, r, 8, gpuForLocalRank(topo, r), {});
    EXPECT_EQ(choice.node, r < 4 ? 0 : 1);
    EXPECT_EQ(choice.reason, "the node of GPU " + std::to_string(r));
  }
}

TEST(NumaChoice, GpuForLocalRankStopsAtTheGpuCount) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  EXPECT_EQ(gpuForLocalRank(topo, 0), 0);
  EXPECT_EQ(gpuForLocalRank(topo, 1), -1);
  EXPECT_EQ(gpuForLocalRank(loadSyntheticHost(kNoNic), 0), -1);
}

TEST(NumaChoice, UnboundRanksFillNodesInBlocks) {
  TopoSummary topo = loadSyntheticHost(kNoNic);
  EXPECT_EQ(unboundNodes(topo, 1), (std::vector<int>{0}));
  EXPECT_EQ(unboundNodes(topo, 3), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(unboundNodes(topo, 4), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(unboundNodes(topo, 5), (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_EQ(unboundNodes(loadSyntheticHost(kSingleNuma), 3), (std::vector<int>{0, 0, 0}));
}

TEST(NumaChoice, BoundRanksLiveWhereMostOfTheirCpusAre) {
  TopoSummary topo = loadSyntheticHost(kNoNic);
  // Node 0 holds CPUs 0-3 and 8-11, node 1 holds 4-7 and 12-15.
  NumaChoice choice = homeNumaNode(topo, 0, 4, -1, {0, 1, 4, 5, 12});
  EXPECT_EQ(choice.node, 1);
  EXPECT_EQ(choice.reason, "the node holding most of its bound CPUs");
  EXPECT_EQ(homeNumaNode(topo, 3, 4, -1, {8}).node, 0);
}

TEST(NumaChoice, TopologyWithoutNodesGivesNone) {
  TopoSummary empty;
  EXPECT_EQ(homeNumaNode(empty, 0, 1, -1, {}).node, -1);
}

}  // namespace
}  // namespace slimeccl::test
