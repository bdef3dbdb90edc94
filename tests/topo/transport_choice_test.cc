// The module per peer class on the synthetic hosts, with and without overrides.
#include <gtest/gtest.h>

#include "tests/topo/synthetic_hosts.h"
#include "topo/transport_choice.h"

namespace slimeccl::test {
namespace {

TransportRequest withIbModule(bool available) {
  TransportRequest request;
  request.ibModuleAvailable = available;
  return request;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(TransportChoice, SameHostPeersUseSharedMemory) {
  for (const char* host : {kTwoSockets, kSingleNuma, kNoNic}) {
    TransportPlan plan = chooseTransports(loadSyntheticHost(host), withIbModule(true));
    EXPECT_EQ(plan.sameHost.module, "shm") << host;
  }
}

TEST(TransportChoice, ActiveVerbsPortsAndAnIbModuleGiveIb) {
  TransportPlan plan = chooseTransports(loadSyntheticHost(kTwoSockets), withIbModule(true));
  EXPECT_EQ(plan.otherHosts.module, "ib");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "mlx5_0:1, mlx5_1:1, mlx5_2:1, mlx5_3:1")) << plan.otherHosts.reason;
}

TEST(TransportChoice, WithoutAnIbModuleSocketsServeOtherHosts) {
  TransportPlan plan = chooseTransports(loadSyntheticHost(kTwoSockets), withIbModule(false));
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "no ib module")) << plan.otherHosts.reason;
}

TEST(TransportChoice, DownPortMeansSocket) {
  TransportPlan plan = chooseTransports(loadSyntheticHost(kSingleNuma), withIbModule(true));
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "mlx5_0:1 DOWN")) << plan.otherHosts.reason;
}

TEST(TransportChoice, NoVerbsDeviceMeansSocket) {
  TransportPlan plan = chooseTransports(loadSyntheticHost(kNoNic), withIbModule(true));
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "no verbs device")) << plan.otherHosts.reason;
}

TEST(TransportChoice, IbHcaThatExcludesEveryPortMeansSocket) {
  TransportRequest request = withIbModule(true);
  request.ibHca = "^mlx5";
  TransportPlan plan = chooseTransports(loadSyntheticHost(kTwoSockets), request);
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "SLIMECCL_IB_HCA='^mlx5'")) << plan.otherHosts.reason;
}

TEST(TransportChoice, IbHcaKeepingOnePortStillGivesIb) {
  TransportRequest request = withIbModule(true);
  request.ibHca = "=mlx5_2:1";
  TransportPlan plan = chooseTransports(loadSyntheticHost(kTwoSockets), request);
  EXPECT_EQ(plan.otherHosts.module, "ib");
  EXPECT_EQ(plan.otherHosts.reason, "verbs ports ACTIVE: mlx5_2:1");
}

TEST(TransportChoice, SlimecclNetForcesOneModuleForEveryPeer) {
  TransportRequest request = withIbModule(true);
  request.forcedNet = "socket";
  TransportPlan plan = chooseTransports(loadSyntheticHost(kTwoSockets), request);
  EXPECT_EQ(plan.sameHost.module, "socket");
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.sameHost.reason, "SLIMECCL_NET"));
}

TEST(TransportChoice, PluginServesOtherHostsOnly) {
  TransportRequest request = withIbModule(true);
  request.netPlugin = "mynet";
  TransportPlan plan = chooseTransports(loadSyntheticHost(kTwoSockets), request);
  EXPECT_EQ(plan.sameHost.module, "shm");
  EXPECT_EQ(plan.otherHosts.module, "mynet");
}

TEST(UsableVerbsPorts, FilterSelectsPorts) {
  TopoSummary topo = loadSyntheticHost(kTwoSockets);
  auto names = [&](const std::string& spec) {
    std::string out;
    for (const VerbsPortRef& p : usableVerbsPorts(topo, parseHcaFilter(spec)))
      out += p.device + ":" + std::to_string(p.port) + " ";
    return out;
  };
  EXPECT_EQ(names(""), "mlx5_0:1 mlx5_1:1 mlx5_2:1 mlx5_3:1 ");
  EXPECT_EQ(names("^mlx5_1,mlx5_3"), "mlx5_0:1 mlx5_2:1 ");
  EXPECT_EQ(names("mlx5_1:2"), "");
  EXPECT_TRUE(usableVerbsPorts(loadSyntheticHost(kSingleNuma), HcaFilter{}).empty());
}

}  // namespace
}  // namespace slimeccl::test
