// The communicator takes its net modules from the topology: through selectNetModules directly,
// and end to end through slimecclCommInitAll in comm_probe processes (the topology is read once
// per process, so each variable setting gets a process of its own).
#include <gtest/gtest.h>

#include "src/base/error.h"
#include "tests/topo/run_command.h"
#include "tests/topo/scratch_file.h"
#include "tests/topo/synthetic_hosts.h"
#include "topo/net_selection.h"
#include "topo/system_topology.h"
#include "topo/topology_loader.h"

namespace slimeccl::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

CommandResult probe(const EnvList& env, int nranks = 2) {
  return runCommand(SLIMECCL_COMM_PROBE, {std::to_string(nranks)}, env);
}

TEST(NetSelection, DefaultsFollowTheLiveTopology) {
  NetModule* nets[kPeerClasses];
  CommParams params = CommParams::fromEnv();
  params.net.clear();
  params.netPlugin.clear();
  ASSERT_EQ(selectNetModules(params, 0, nets), slimecclSuccess) << threadError();
  const TopoSummary* topo = nullptr;
  ASSERT_EQ(systemTopology(&topo), slimecclSuccess);
  NetModule* ib = nullptr;
  NetPlan plan = liveNetPlan(*topo, "", "", 0, &ib);
  EXPECT_STREQ(nets[0]->name(), "shm");
  ASSERT_NE(nets[1], nullptr);
  EXPECT_EQ(std::string(nets[1]->name()), plan.otherHosts.module);
}

TEST(NetSelection, ForcedModuleServesEveryPeer) {
  NetModule* nets[kPeerClasses];
  CommParams params = CommParams::fromEnv();
  params.net = "socket";
  ASSERT_EQ(selectNetModules(params, 3, nets), slimecclSuccess) << threadError();
  EXPECT_STREQ(nets[0]->name(), "socket");
  EXPECT_EQ(nets[1], nullptr);
}

TEST(NetSelection, MissingModulesAreNamed) {
  NetModule* nets[kPeerClasses];
  CommParams params = CommParams::fromEnv();
  params.net = "no-such-net";
  EXPECT_EQ(selectNetModules(params, 2, nets), slimecclInvalidArgument);
  EXPECT_TRUE(contains(threadError(), "rank 2: SLIMECCL_NET/netName 'no-such-net'")) << threadError();
  params.net.clear();
  params.netPlugin = "no-such-plugin";
  EXPECT_EQ(selectNetModules(params, 2, nets), slimecclInvalidArgument);
  EXPECT_TRUE(contains(threadError(), "rank 2: SLIMECCL_NET_PLUGIN 'no-such-plugin'")) << threadError();
}

TEST(CommInit, UnreadableTopologyFileFailsInitAndIsNamed) {
  CommandResult r = probe({{"SLIMECCL_TOPO_FILE", "/nonexistent/host.xml"}}, 1);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.out, "rank 0: SLIMECCL_TOPO_FILE='/nonexistent/host.xml' cannot be read")) << r.out;
}

TEST(CommInit, FirstCommunicatorDumpsTheTopology) {
  ScratchFile dump("dump.xml");
  CommandResult r = probe({{"SLIMECCL_TOPO_DUMP_FILE", dump.path()}});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  TopoSummary reloaded;
  EXPECT_EQ(loadTopology(TopoSource{dump.path(), ""}, &reloaded), slimecclSuccess) << threadError();
  EXPECT_GE(reloaded.hardwareThreads, 1);
}

TEST(CommInit, EverySyntheticHostRunsAllGather) {
  // Same-host peers use shm whatever the file says; the file only changes the module for peers on
  // other hosts, which these ranks do not have.
  for (const char* host : {kNoNic, kSingleNuma}) {
    CommandResult r = probe({{"SLIMECCL_TOPO_FILE", syntheticHostPath(host)}}, 3);
    EXPECT_EQ(r.status, 0) << host << ": " << r.out << r.err;
    EXPECT_EQ(r.out, "ok\n") << host;
  }
}

TEST(CommInit, InfoLogNamesTheModuleForOtherHostsAndWhy) {
  CommandResult r = probe({{"SLIMECCL_TOPO_FILE", syntheticHostPath(kSingleNuma)},
                           {"SLIMECCL_DEBUG", "INFO"},
                           {"SLIMECCL_DEBUG_SUBSYS", "TOPO"}},
                          1);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "peers on other hosts use 'socket': no verbs port is ACTIVE (mlx5_0:1 DOWN)")) << r.err;
}

}  // namespace
}  // namespace slimeccl::test
