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
  std::string layout;     // names host_of in the test name
  std::vector<int> host_of;
  Launch launch;
};

void PrintTo(const HostsCase& hosts_case, std::ostream* os) {
  *os << "AllGather with algorithm " << hosts_case.algorithm << ", hosts";
  for (int host : hosts_case.host_of) *os << " " << host;
  *os << ", " << launch_name(hosts_case.launch);
}

struct Layout {
  const char* name;
  std::vector<int> host_of;
};

std::vector<HostsCase> hosts_cases() {
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
        cases.push_back({algorithm, layout.name, layout.host_of, launch});
    }
  }
  return cases;
}

std::string hosts_case_name(const ::testing::TestParamInfo<HostsCase>& info) {
  return info.param.algorithm + "_" + info.param.layout + "_" + launch_name(info.param.launch);
}

class AllGatherAcrossHosts : public ::testing::TestWithParam<HostsCase> {};

TEST_P(AllGatherAcrossHosts, SweepAndLargeCalls) {
  const HostsCase& hosts_case = GetParam();
  const int nranks = static_cast<int>(hosts_case.host_of.size());
  RunOptions options = algorithm_options({Collective::kAllGather, hosts_case.algorithm, hosts_case.launch, nranks});
  run_ranks_raw(
      hosts_case.launch, nranks,
      [&](int rank, int size, const slimecclUniqueId& id) {
        // Each forked rank has its own environment, so each can claim its own host.
        setenv("SLIMECCL_HOSTID", concat("simulated-host-", hosts_case.host_of[rank]).c_str(), 1);
        with_comm(rank, size, id, [&](slimecclComm_t comm) {
          run_calls(Collective::kAllGather, comm, sweep_calls(Collective::kAllGather, size));
          run_calls(Collective::kAllGather, comm, large_calls(Collective::kAllGather, size));
        });
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(SimulatedHosts, AllGatherAcrossHosts, ::testing::ValuesIn(hosts_cases()), hosts_case_name);

}  // namespace
}  // namespace slimeccl_test
