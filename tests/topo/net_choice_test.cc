// The module per peer class on the synthetic hosts, with and without overrides.
#include <gtest/gtest.h>

#include "tests/topo/synthetic_hosts.h"
#include "topo/net_choice.h"

namespace slimeccl::test {
namespace {

NetRequest withIbModule(bool available) {
  NetRequest request;
  request.ibModuleAvailable = available;
  return request;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(NetChoice, SameHostPeersUseSharedMemory) {
  for (const char* host : {kTwoSockets, kSingleNuma, kNoNic}) {
    NetPlan plan = chooseNets(loadSyntheticHost(host), withIbModule(true));
    EXPECT_EQ(plan.sameHost.module, "shm") << host;
  }
}

TEST(NetChoice, ActiveVerbsPortsAndAnIbModuleGiveIb) {
  NetPlan plan = chooseNets(loadSyntheticHost(kTwoSockets), withIbModule(true));
  EXPECT_EQ(plan.otherHosts.module, "ib");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "mlx5_0:1, mlx5_1:1, mlx5_2:1, mlx5_3:1")) << plan.otherHosts.reason;
}

TEST(NetChoice, WithoutAnIbModuleSocketsServeOtherHosts) {
  NetPlan plan = chooseNets(loadSyntheticHost(kTwoSockets), withIbModule(false));
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "no ib module")) << plan.otherHosts.reason;
}

TEST(NetChoice, DownPortMeansSocket) {
  NetPlan plan = chooseNets(loadSyntheticHost(kSingleNuma), withIbModule(true));
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "mlx5_0:1 DOWN")) << plan.otherHosts.reason;
}

TEST(NetChoice, NoVerbsDeviceMeansSocket) {
  NetPlan plan = chooseNets(loadSyntheticHost(kNoNic), withIbModule(true));
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "no verbs device")) << plan.otherHosts.reason;
}

TEST(NetChoice, IbHcaThatExcludesEveryPortMeansSocket) {
  NetRequest request = withIbModule(true);
  request.ibHca = "^mlx5";
  NetPlan plan = chooseNets(loadSyntheticHost(kTwoSockets), request);
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.otherHosts.reason, "SLIMECCL_IB_HCA='^mlx5'")) << plan.otherHosts.reason;
}

TEST(NetChoice, IbHcaKeepingOnePortStillGivesIb) {
  NetRequest request = withIbModule(true);
  request.ibHca = "=mlx5_2:1";
  NetPlan plan = chooseNets(loadSyntheticHost(kTwoSockets), request);
  EXPECT_EQ(plan.otherHosts.module, "ib");
  EXPECT_EQ(plan.otherHosts.reason, "verbs ports ACTIVE: mlx5_2:1");
}

TEST(NetChoice, SlimecclNetForcesOneModuleForEveryPeer) {
  NetRequest request = withIbModule(true);
  request.forcedNet = "socket";
  NetPlan plan = chooseNets(loadSyntheticHost(kTwoSockets), request);
  EXPECT_EQ(plan.sameHost.module, "socket");
  EXPECT_EQ(plan.otherHosts.module, "socket");
  EXPECT_TRUE(contains(plan.sameHost.reason, "SLIMECCL_NET"));
}

TEST(NetChoice, PluginServesOtherHostsOnly) {
  NetRequest request = withIbModule(true);
  request.netPlugin = "mynet";
  NetPlan plan = chooseNets(loadSyntheticHost(kTwoSockets), request);
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
