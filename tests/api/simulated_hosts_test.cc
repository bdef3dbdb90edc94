// AllGather across several hosts, simulated by giving forked ranks different SLIMECCL_HOSTID
// values: the hierarchical algorithm (forced, and as the tuner's choice for large calls between
// hosts) with hosts of uneven sizes and hosts whose ranks are not contiguous.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "collective_sweep.h"
#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

struct HostsCase {
  std::string algorithm;  // forced with SLIMECCL_ALGO, or kTunerChoice
  std::string layout;     // names hostOf in the test name
  std::vector<int> hostOf;
  Launch launch;
};

// NOLINTNEXTLINE(readability-identifier-naming): gtest finds PrintTo by this name
void PrintTo(const HostsCase& hostsCase, std::ostream* os) {
  *os << "AllGather with algorithm " << hostsCase.algorithm << ", hosts";
  for (int host : hostsCase.hostOf) *os << " " << host;
  *os << ", " << launchName(hostsCase.launch);
}

struct Layout {
  const char* name;
  std::vector<int> hostOf;
};

std::vector<HostsCase> hostsCases() {
  const std::vector<Layout> layouts = {
      {"OneRankPerHost", {0, 1, 2}},
      {"ThreeAndTwo", {0, 0, 0, 1, 1}},
      {"ThreeHostsInterleaved", {0, 1, 2, 0, 1, 2, 0}},
      {"TwoHostsInterleaved", {0, 1, 0, 1, 0, 1, 0, 1}},
  };
  std::vector<HostsCase> cases;
  for (const char* algorithm : {"hier", kTunerChoice}) {
    for (const Layout& layout : layouts) {
      for (Launch launch : {Launch::kForkedShm, Launch::kForkedSocket})
        cases.push_back({algorithm, layout.name, layout.hostOf, launch});
    }
  }
  return cases;
}

std::string hostsCaseName(const ::testing::TestParamInfo<HostsCase>& info) {
  return info.param.algorithm + "_" + info.param.layout + "_" + launchName(info.param.launch);
}

class AllGatherAcrossHosts : public ::testing::TestWithParam<HostsCase> {};

TEST_P(AllGatherAcrossHosts, SweepAndLargeCalls) {
  const HostsCase& hostsCase = GetParam();
  const int nranks = static_cast<int>(hostsCase.hostOf.size());
  RunOptions options = algorithmOptions({Collective::kAllGather, hostsCase.algorithm, hostsCase.launch, nranks});
  runRanksRaw(
      hostsCase.launch, nranks,
      [&](int rank, int size, const slimecclUniqueId& id) {
        // Each forked rank has its own environment, so each can claim its own host.
        setenv("SLIMECCL_HOSTID", concat("simulated-host-", hostsCase.hostOf[rank]).c_str(), 1);
        withComm(rank, size, id, [&](slimecclComm_t comm) {
          runCalls(Collective::kAllGather, comm, sweepCalls(Collective::kAllGather, size));
          runCalls(Collective::kAllGather, comm, largeCalls(Collective::kAllGather, size));
        });
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(SimulatedHosts, AllGatherAcrossHosts, ::testing::ValuesIn(hostsCases()), hostsCaseName);

}  // namespace
}  // namespace slimeccl_test
