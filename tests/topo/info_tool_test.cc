// slimeccl-info on this machine and on the synthetic hosts, as text and as JSON.
#include <gtest/gtest.h>

#include "src/base/error.h"
#include "tests/topo/json_reader.h"
#include "tests/topo/run_command.h"
#include "tests/topo/scratch_file.h"
#include "tests/topo/synthetic_hosts.h"
#include "topo/host_id.h"
#include "topo/topology_loader.h"

namespace slimeccl::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

CommandResult info(const std::vector<std::string>& args, const EnvList& env = {}) {
  return runCommand(SLIMECCL_INFO_BINARY, args, env);
}

JsonValue infoJson(const std::vector<std::string>& args, const EnvList& env = {}) {
  std::vector<std::string> withJson = args;
  withJson.push_back("--json");
  CommandResult r = info(withJson, env);
  EXPECT_EQ(r.status, 0) << r.err;
  JsonValue value;
  std::string error;
  EXPECT_TRUE(parseJson(r.out, &value, &error)) << error << "\n" << r.out;
  return value;
}

std::vector<std::string> pciBusIds(const JsonValue& nics) {
  std::vector<std::string> out;
  for (const JsonValue& nic : nics.items)
    if (!nic["pci_bus_id"].isNull()) out.push_back(nic["pci_bus_id"].text);
  return out;
}

EnvList topoFile(const char* host) { return {{"SLIMECCL_TOPO_FILE", syntheticHostPath(host)}}; }

// The ib module may or may not be built; both answers must say which and why.
void expectIbOrExplainedSocket(const JsonValue& otherHosts) {
  std::string module = otherHosts["module"].text;
  if (module == "socket")
    EXPECT_TRUE(contains(otherHosts["reason"].text, "no ib module")) << otherHosts["reason"].text;
  else
    EXPECT_EQ(module, "ib");
}

TEST(InfoTool, TextOnThisMachineShowsEverySection) {
  CommandResult r = info({});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* section : {"Host\n", "NUMA nodes\n", "NICs\n", "GPUs\n", "Net module per peer class\n",
                              "Local ranks (", "Tuner table (", "GPU path choices ("})
    EXPECT_TRUE(contains(r.out, section)) << section << " missing in:\n" << r.out;
  EXPECT_TRUE(contains(r.out, "identity      " + hostIdentity())) << r.out;
  EXPECT_TRUE(contains(r.out, "topology      this machine")) << r.out;
  EXPECT_TRUE(contains(r.out, "same host     shm")) << r.out;
  EXPECT_TRUE(contains(r.out, "allgather")) << r.out;
  EXPECT_TRUE(contains(r.out, "  copy kernel up to    allgather      1..inf   [0 B, inf)              64.0 MiB\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "  reduction algorithm  allreduce      1..2     [256.0 MiB, inf)        twoshot\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "  reduction blocks     allreduce      3..inf   [8.0 MiB, inf)          16\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "  broadcast algorithm  broadcast      3..inf   [0 B, inf)              scatter_pull\n"))
      << r.out;
}

TEST(InfoTool, JsonOnThisMachineMatchesTheLiveTopology) {
  TopoSummary live;
  ASSERT_EQ(loadTopology(TopoSource{}, &live), slimecclSuccess) << threadError();
  JsonValue v = infoJson({"--local-ranks", "3"});
  EXPECT_EQ(v["host"]["identity"].text, hostIdentity());
  EXPECT_TRUE(v["topology"]["live"].flag);
  EXPECT_EQ(v["topology"]["hardware_threads"].number, live.hardwareThreads);
  ASSERT_EQ(v["numa_nodes"].size(), live.numaNodes.size());
  for (size_t i = 0; i < live.numaNodes.size(); ++i) {
    EXPECT_EQ(v["numa_nodes"][i]["cpus"].text, cpuRanges(live.numaNodes[i].cpus));
    EXPECT_EQ(v["numa_nodes"][i]["memory_bytes"].number, static_cast<double>(live.numaNodes[i].memoryBytes));
  }
  ASSERT_EQ(v["nics"].size(), live.nics.size());
  for (size_t i = 0; i < live.nics.size(); ++i) EXPECT_EQ(v["nics"][i]["name"].text, live.nics[i].name);
  EXPECT_EQ(v["net"]["same_host"]["module"].text, "shm");
  EXPECT_EQ(v["local_ranks"]["count"].number, 3);
  EXPECT_EQ(v["local_ranks"]["count_from"].text, "--local-ranks");
  EXPECT_EQ(v["local_ranks"]["ranks"].size(), 3u);
  // No module here reaches device memory (the socket module; no verbs device beside a GPU).
  for (const JsonValue& rank : v["local_ranks"]["ranks"].items) {
    EXPECT_EQ(rank["gpu_direct_rdma"].text, "none");
    EXPECT_TRUE(contains(rank["gpu_direct_rdma_reason"].text, "host staging: ")) << rank["gpu_direct_rdma_reason"].text;
  }
  ASSERT_GT(v["tuner"].size(), 0u);
  bool allgather = false;
  for (const JsonValue& row : v["tuner"].items) allgather |= row["collective"].text == "allgather";
  EXPECT_TRUE(allgather);
  ASSERT_GT(v["gpu_choices"].size(), 0u);
  const JsonValue& first = v["gpu_choices"][0];
  EXPECT_EQ(first["choice"].text, "copy kernel up to");
  EXPECT_EQ(first["collective"].text, "allgather");
  EXPECT_EQ(first["value"].text, "64.0 MiB");
}

TEST(InfoTool, TwoSocketHostAsText) {
  CommandResult r = info({}, topoFile(kTwoSockets));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "file " + syntheticHostPath(kTwoSockets) + " (host synthetic-2s-8gpu-4nic"));
  EXPECT_TRUE(contains(r.out, "2 packages, 16 cores, 32 hardware threads")) << r.out;
  EXPECT_TRUE(contains(r.out, "  0     0        0-7,16-23         256.0 GiB")) << r.out;
  EXPECT_TRUE(contains(r.out, "  ibp149s0      0000:95:00.0   1")) << r.out;
  EXPECT_TRUE(contains(r.out, "verbs mlx5_3 port 1: ACTIVE, lid 0x14")) << r.out;
  EXPECT_TRUE(contains(r.out, "  7    0000:a4:00.0   1     cuda7   NVIDIA H100 80GB HBM3")) << r.out;
  EXPECT_TRUE(contains(r.out, "  GPU 0 PIX 4         NODE 10       SYS 12        SYS 12")) << r.out;
  EXPECT_TRUE(contains(r.out, "Local ranks (8, one per GPU;")) << r.out;
  EXPECT_TRUE(contains(r.out, "  5     5    1     ibp149s0")) << r.out;
}

TEST(InfoTool, TwoSocketHostAsJson) {
  JsonValue v = infoJson({}, topoFile(kTwoSockets));
  EXPECT_FALSE(v["topology"]["live"].flag);
  ASSERT_EQ(v["gpus"].size(), 8u);
  EXPECT_EQ(v["gpus"][3]["pci_bus_id"].text, "0000:24:00.0");
  EXPECT_EQ(v["gpus"][3]["numa_node"].number, 0);
  ASSERT_EQ(v["nics"].size(), 4u);
  EXPECT_EQ(v["nics"][2]["verbs"][0]["device"].text, "mlx5_2");
  EXPECT_EQ(v["nics"][2]["verbs"][0]["ports"][0]["state"].text, "ACTIVE");
  EXPECT_EQ(v["gpu_nic_paths"].size(), 32u);
  expectIbOrExplainedSocket(v["net"]["other_hosts"]);
  const JsonValue& ranks = v["local_ranks"]["ranks"];
  ASSERT_EQ(ranks.size(), 8u);
  const char* nics[] = {"ibp21s0", "ibp21s0", "ibp37s0", "ibp37s0", "ibp149s0", "ibp149s0", "ibp165s0", "ibp165s0"};
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(ranks[i]["gpu"].number, i);
    EXPECT_EQ(ranks[i]["nic"].text, nics[i]);
    EXPECT_EQ(ranks[i]["path_class"].text, "PIX");
    EXPECT_EQ(ranks[i]["numa_node"].number, i < 4 ? 0 : 1);
  }
}

TEST(InfoTool, IbHcaAndLocalRanksFromTheEnvironment) {
  EnvList env = topoFile(kTwoSockets);
  env.push_back({"SLIMECCL_IB_HCA", "^mlx5_0"});
  env.push_back({"SLIMECCL_LOCAL_NRANKS", "2"});
  JsonValue v = infoJson({}, env);
  EXPECT_EQ(v["local_ranks"]["count_from"].text, "SLIMECCL_LOCAL_NRANKS");
  const JsonValue& ranks = v["local_ranks"]["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  if (v["net"]["other_hosts"]["module"].text == "ib") {
    // mlx5_0 excluded: GPUs 0 and 1 go to the other NIC of their socket.
    EXPECT_EQ(ranks[0]["device"].text, "mlx5_1:1");
    EXPECT_EQ(ranks[1]["path_class"].text, "NODE");
  }
}

TEST(InfoTool, SingleNumaHostPicksTheGpusNicThenAlternates) {
  JsonValue v = infoJson({"--local-ranks", "4"}, topoFile(kSingleNuma));
  EXPECT_EQ(v["net"]["other_hosts"]["module"].text, "socket");
  EXPECT_TRUE(contains(v["net"]["other_hosts"]["reason"].text, "mlx5_0:1 DOWN"));
  const JsonValue& ranks = v["local_ranks"]["ranks"];
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_EQ(ranks[0]["gpu"].number, 0);
  EXPECT_TRUE(ranks[1]["gpu"].isNull());
  EXPECT_EQ(ranks[0]["nic"].text, "enp4s0f0np0");
  EXPECT_EQ(ranks[1]["nic"].text, "enp4s0f0np0");
  EXPECT_EQ(ranks[2]["nic"].text, "eno1");
  EXPECT_EQ(ranks[3]["nic"].text, "enp4s0f0np0");
}

TEST(InfoTool, SocketIfnameSteersTheNicChoice) {
  EnvList env = topoFile(kSingleNuma);
  env.push_back({"SLIMECCL_SOCKET_IFNAME", "eno"});
  JsonValue v = infoJson({"--local-ranks", "3"}, env);
  for (const JsonValue& rank : v["local_ranks"]["ranks"].items) EXPECT_EQ(rank["nic"].text, "eno1");
}

TEST(InfoTool, HostWithoutNic) {
  CommandResult r = info({"--local-ranks", "4"}, topoFile(kNoNic));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "NICs\n  none\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "other hosts   socket   no verbs device")) << r.out;
  JsonValue v = infoJson({"--local-ranks", "4"}, topoFile(kNoNic));
  const JsonValue& ranks = v["local_ranks"]["ranks"];
  ASSERT_EQ(ranks.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(ranks[i]["nic"].isNull());
    EXPECT_EQ(ranks[i]["numa_node"].number, i < 2 ? 0 : 1);
  }
}

TEST(InfoTool, ForcedNetIsShownForBothPeerClasses) {
  EnvList env = topoFile(kTwoSockets);
  env.push_back({"SLIMECCL_NET", "socket"});
  JsonValue v = infoJson({}, env);
  EXPECT_EQ(v["net"]["same_host"]["module"].text, "socket");
  EXPECT_EQ(v["net"]["other_hosts"]["module"].text, "socket");
}

TEST(InfoTool, AlgoOverrideIsListedFirst) {
  JsonValue v = infoJson({}, {{"SLIMECCL_ALGO", "allgather:ring"}});
  ASSERT_GT(v["tuner"].size(), 1u);
  EXPECT_EQ(v["tuner"][0]["collective"].text, "allgather");
  EXPECT_EQ(v["tuner"][0]["algorithm"].text, "ring");
  EXPECT_TRUE(v["tuner"][0]["forced"].flag);
}

TEST(InfoTool, DumpFileReloadsToTheSameReport) {
  ScratchFile dump("dump.xml");
  JsonValue live = infoJson({}, {{"SLIMECCL_TOPO_DUMP_FILE", dump.path()}});
  JsonValue reloaded = infoJson({}, {{"SLIMECCL_TOPO_FILE", dump.path()}});
  EXPECT_EQ(reloaded["topology"]["source"].text, dump.path());
  ASSERT_EQ(reloaded["numa_nodes"].size(), live["numa_nodes"].size());
  for (size_t i = 0; i < live["numa_nodes"].size(); ++i)
    EXPECT_EQ(reloaded["numa_nodes"][i]["cpus"].text, live["numa_nodes"][i]["cpus"].text);
  // The dump is hwloc's view: verbs devices only rdma-core saw (soft-RoCE) are not in it.
  EXPECT_EQ(pciBusIds(reloaded["nics"]), pciBusIds(live["nics"]));
}

TEST(InfoTool, BadTopologyFileIsAnErrorNamingIt) {
  CommandResult r = info({}, {{"SLIMECCL_TOPO_FILE", "/nonexistent/host.xml"}});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "SLIMECCL_TOPO_FILE='/nonexistent/host.xml' cannot be read")) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(InfoTool, BadArgumentsPrintUsage) {
  CommandResult r = info({"--local-ranks", "0"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "--local-ranks needs a rank count")) << r.err;
  EXPECT_TRUE(contains(r.err, "usage: slimeccl-info")) << r.err;
  r = info({"--bogus"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "unknown argument '--bogus'")) << r.err;
  r = info({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.out, "SLIMECCL_TOPO_FILE")) << r.out;
}

}  // namespace
}  // namespace slimeccl::test
