// A comm across hosts in host tiers (SLIMECCL_HOST_TIERS=all, host buffers) whose last rank dies
// between AllGathers: every survivor's AllGather ends with slimecclRemoteError long before the
// timeout, though only two of them talk to the dead rank; the sentence names the tier, maps the
// tier's ranks to the comm's, and names the tier's peer that died.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "forked_ranks.h"
#include "slimeccl.h"

namespace {

using slimeccl_test::RankReport;
using slimeccl_test::runForkedRanks;

constexpr int kRanks = 4;

TEST(HostTiersFailure, ADeadRankFailsEverySurvivorNamingTheTierAndThePeer) {
  const std::vector<RankReport> reports = runForkedRanks(
      kRanks,
      [](int rank, slimecclComm_t comm) {
        slimecclDevicePathInfo info{};
        if (slimecclCommGetDevicePathInfo(comm, &info) != slimecclSuccess || info.hostTiers != 1)
          return slimecclInternalError;
        constexpr size_t kCount = 1 << 18;
        std::vector<int> send(kCount, rank), recv(kCount * kRanks);
        // One AllGather to the end first: the links are up when the last rank dies.
        if (slimecclAllGather(send.data(), recv.data(), kCount, slimecclInt32, comm, nullptr) != slimecclSuccess)
          return slimecclInternalError;
        if (rank == kRanks - 1) _exit(0);
        for (int i = 0; i < 1000; ++i) {
          const slimecclResult_t rc = slimecclAllGather(send.data(), recv.data(), kCount, slimecclInt32, comm, nullptr);
          if (rc != slimecclSuccess) return rc;
        }
        return slimecclSuccess;
      },
      60,
      [](int rank) {
        setenv("SLIMECCL_HOSTID", rank < 2 ? "tier-failure-host-0" : "tier-failure-host-1", 1);
        setenv("SLIMECCL_HOST_TIERS", "all", 1);
        setenv("SLIMECCL_TIMEOUT_MS", "30000", 1);
      });
  for (int rank = 0; rank < kRanks - 1; ++rank) {
    const RankReport& report = reports[rank];
    ASSERT_TRUE(report.reported) << "rank " << rank << " did not report";
    EXPECT_EQ(report.result, slimecclRemoteError) << "rank " << rank << ": " << report.error;
    EXPECT_LT(report.seconds, 10.0) << "rank " << rank << ", long before the 30 s timeout";
    EXPECT_EQ(report.error.find("rank " + std::to_string(rank) + ": "), 0u) << report.error;
    EXPECT_NE(report.error.find("in host tiers"), std::string::npos) << report.error;
  }
  // Rank 1 meets the dead rank between hosts (tier 'place1': ranks 1 and 3), rank 2 within its
  // host (tier 'host1': ranks 2 and 3); each names it as its tier's peer 1.
  for (const auto& [rank, map] : {std::pair<int, std::string>{1, "its ranks 0, 1 are ranks 1, 3 here"},
                                  std::pair<int, std::string>{2, "its ranks 0, 1 are ranks 2, 3 here"}}) {
    EXPECT_NE(reports[rank].error.find(map), std::string::npos) << reports[rank].error;
    EXPECT_NE(reports[rank].error.find("peer 1"), std::string::npos) << reports[rank].error;
  }
}

}  // namespace
