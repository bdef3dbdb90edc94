// The NIC of each local rank on the synthetic hosts: by PCI path from its GPU, else by NUMA
// locality, spread round-robin over equally close NICs; SLIMECCL_IB_HCA and
// SLIMECCL_SOCKET_IFNAME narrow the candidates.
#include <gtest/gtest.h>

#include "tests/topo/synthetic_hosts.h"
#include "topo/rank_placement.h"

namespace slimeccl::test {
namespace {

struct Placed {
  std::string nic;
  std::string device;
};

std::vector<RankPlacement> placeAll(const TopoSummary& topo, const std::string& module, int localNranks, int gpu,
                                    const std::string& ibHca = "", const std::string& ifname = "") {
  std::vector<NicCandidate> candidates = nicCandidates(topo, module, ibHca, ifname);
  std::vector<RankPlacement> out;
  for (int r = 0; r < localNranks; ++r) {
    RankPlacementRequest request;
    request.localRank = r;
    request.localNranks = localNranks;
    request.gpu = gpu;
    out.push_back(placeLocalRank(topo, candidates, request));
  }
  return out;
}

std::vector<std::string> deviceNames(const std::vector<RankPlacement>& placements) {
  std::vector<std::string> out;
  for (const RankPlacement& p : placements) out.push_back(p.device.empty() ? "-" : p.device);
  return out;
}

TEST(NicChoice, EachGpuRankTakesTheNicOnItsSwitchOverIb) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  std::vector<RankPlacement> placed = placeAll(topo, "ib", 8, kGpuByLocalRank);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(placed[r].gpu, r);
    EXPECT_EQ(placed[r].nic, r / 2);
    EXPECT_EQ(placed[r].device, "mlx5_" + std::to_string(r / 2) + ":1");
    EXPECT_EQ(placed[r].nicChoice.pathClass, PathClass::Pix);
    EXPECT_EQ(placed[r].nicChoice.hops, 4);
    EXPECT_EQ(placed[r].nicChoice.tied, 1);
    EXPECT_EQ(placed[r].numa.node, r < 4 ? 0 : 1);
  }
}

TEST(NicChoice, OverSocketsTheSameNicsGiveTheirInterfaces) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  EXPECT_EQ(deviceNames(placeAll(topo, "socket", 8, kGpuByLocalRank)),
            (std::vector<std::string>{"ibp21s0", "ibp21s0", "ibp37s0", "ibp37s0", "ibp149s0", "ibp149s0", "ibp165s0",
                                      "ibp165s0"}));
}

TEST(NicChoice, ExcludedNicSendsItsGpusToTheNextClosestOnTheirSocket) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  std::vector<RankPlacement> placed = placeAll(topo, "ib", 8, kGpuByLocalRank, "^mlx5_1,mlx5_2");
  EXPECT_EQ(deviceNames(placed), (std::vector<std::string>{"mlx5_0:1", "mlx5_0:1", "mlx5_0:1", "mlx5_0:1", "mlx5_3:1",
                                                           "mlx5_3:1", "mlx5_3:1", "mlx5_3:1"}));
  EXPECT_EQ(placed[2].nicChoice.pathClass, PathClass::Node);
  EXPECT_EQ(placed[4].nicChoice.pathClass, PathClass::Node);
}

TEST(NicChoice, OnlyNicsOnTheOtherSocketLeftMeansSys) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  std::vector<RankPlacement> placed = placeAll(topo, "ib", 2, kGpuByLocalRank, "mlx5_2,mlx5_3");
  // Both remaining NICs are equally far from GPU 0 and 1: round-robin by local rank.
  EXPECT_EQ(deviceNames(placed), (std::vector<std::string>{"mlx5_2:1", "mlx5_3:1"}));
  EXPECT_EQ(placed[0].nicChoice.pathClass, PathClass::Sys);
  EXPECT_EQ(placed[0].nicChoice.tied, 2);
}

TEST(NicChoice, CpuRanksSpreadOverTheNicsOfTheirNode) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  std::vector<RankPlacement> placed = placeAll(topo, "ib", 8, -1);
  EXPECT_EQ(deviceNames(placed), (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1", "mlx5_0:1", "mlx5_1:1", "mlx5_2:1",
                                                           "mlx5_3:1", "mlx5_2:1", "mlx5_3:1"}));
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(placed[r].gpu, -1);
    EXPECT_EQ(placed[r].numa.node, r < 4 ? 0 : 1);
    EXPECT_EQ(placed[r].nicChoice.tied, 2);
    EXPECT_EQ(placed[r].nicChoice.pathClass, PathClass::Node);
  }
}

TEST(NicChoice, BoundCpusDecideTheNodeOfACpuRank) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  std::vector<NicCandidate> candidates = nicCandidates(topo, "ib", "", "");
  RankPlacementRequest request;
  request.localRank = 0;
  request.localNranks = 2;
  request.gpu = -1;
  request.boundCpus = {8, 9, 24, 25};
  RankPlacement placed = placeLocalRank(topo, candidates, request);
  EXPECT_EQ(placed.numa.node, 1);
  EXPECT_EQ(placed.device, "mlx5_2:1");
}

TEST(NicChoice, RanksBeyondTheGpusAreCpuRanks) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  std::vector<RankPlacement> placed = placeAll(topo, "socket", 4, kGpuByLocalRank);
  EXPECT_EQ(placed[0].gpu, 0);
  EXPECT_EQ(placed[1].gpu, -1);
  // GPU 0 shares a switch with the ConnectX-5 (PIX) while the onboard NIC is across the host
  // bridge (PHB); CPU ranks see both NICs on their node and alternate.
  EXPECT_EQ(deviceNames(placed), (std::vector<std::string>{"enp4s0f0np0", "enp4s0f0np0", "eno1", "enp4s0f0np0"}));
  EXPECT_EQ(placed[0].nicChoice.pathClass, PathClass::Pix);
  EXPECT_EQ(placed[0].nicChoice.tied, 1);
}

TEST(NicChoice, SocketIfnameNarrowsTheCandidates) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  EXPECT_EQ(deviceNames(placeAll(topo, "socket", 3, kGpuByLocalRank, "", "eno")),
            (std::vector<std::string>{"eno1", "eno1", "eno1"}));
  EXPECT_EQ(deviceNames(placeAll(topo, "socket", 2, -1, "", "^eno")),
            (std::vector<std::string>{"enp4s0f0np0", "enp4s0f0np0"}));
  EXPECT_EQ(deviceNames(placeAll(topo, "socket", 2, -1, "", "=enp4s0")), (std::vector<std::string>{"-", "-"}));
}

TEST(NicChoice, IfnameNamingNoPciNicLeavesNoNic) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  std::vector<RankPlacement> placed = placeAll(topo, "socket", 1, kGpuByLocalRank, "", "lo");
  EXPECT_EQ(placed[0].nic, -1);
  EXPECT_EQ(placed[0].nicChoice.reason, "no NIC that the net module can use");
}

TEST(NicChoice, DownVerbsPortGivesNoIbCandidate) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  EXPECT_TRUE(nicCandidates(topo, "ib", "", "").empty());
}

TEST(NicChoice, RecordedVmGpuRankUsesTheOnlyNicAcrossTheHostBridge) {
  TopoSummary topo = loadSyntheticHost(kRecordedH200Vm);
  std::vector<RankPlacement> placed = placeAll(topo, "socket", 2, kGpuByLocalRank);
  EXPECT_EQ(deviceNames(placed), (std::vector<std::string>{"eth0", "eth0"}));
  EXPECT_EQ(placed[0].nicChoice.pathClass, PathClass::Phb);
  EXPECT_EQ(placed[0].nicChoice.hops, 2);
  EXPECT_EQ(placed[1].gpu, -1);
}

TEST(NicChoice, HostWithoutNicPlacesNoNic) {
  TopoSummary topo = loadSyntheticHost(kNoNic);
  for (const RankPlacement& p : placeAll(topo, "socket", 4, kGpuByLocalRank)) EXPECT_EQ(p.nic, -1);
}

TEST(NicChoice, SharedMemoryAndPluginsChooseNoNic) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  EXPECT_TRUE(nicCandidates(topo, "shm", "", "").empty());
  EXPECT_TRUE(nicCandidates(topo, "mynet", "", "").empty());
}

TEST(NicChoice, InterfacesWithoutAddressAreNotSocketCandidates) {
  TopoSummary topo = loadSyntheticHost(kSingleNuma);
  topo.nics[nicIndex(topo, "eno1")].netdevs[0].usable = false;
  EXPECT_EQ(deviceNames(placeAll(topo, "socket", 2, -1)), (std::vector<std::string>{"enp4s0f0np0", "enp4s0f0np0"}));
}

}  // namespace
}  // namespace slimeccl::test
