// Mismatched calls end on both sides with InvalidUsage and a sentence naming both calls.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <thread>
#include <vector>

#include "slimeccl.h"

namespace {

struct RankOutcome {
  slimecclResult_t result = slimecclSuccess;
  std::string error;
};

// Two ranks as threads; rank r gathers counts[r] floats.
std::vector<RankOutcome> allgatherWithCounts(size_t count0, size_t count1) {
  setenv("SLIMECCL_TIMEOUT_MS", "60000", 1);
  slimecclUniqueId id;
  EXPECT_EQ(slimecclGetUniqueId(&id), slimecclSuccess);
  std::vector<RankOutcome> out(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      slimecclComm_t comm;
      if (slimecclCommInitRank(&comm, 2, id, r) != slimecclSuccess) {
        out[r].result = slimecclInternalError;
        out[r].error = std::string("init failed: ") + slimecclGetLastError(nullptr);
        return;
      }
      size_t count = r == 0 ? count0 : count1;
      std::vector<float> send(count, 1.0f), recv(2 * count);
      out[r].result = slimecclAllGather(send.data(), recv.data(), count, slimecclFloat, comm, nullptr);
      out[r].error = slimecclGetLastError(comm);
      slimecclCommDestroy(comm);
    });
  }
  for (auto& t : ranks) t.join();
  unsetenv("SLIMECCL_TIMEOUT_MS");
  return out;
}

TEST(Mismatch, DifferentCountsFailOnBothSidesNamingBothCalls) {
  std::vector<RankOutcome> out = allgatherWithCounts(100, 200);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(out[r].result, slimecclInvalidUsage) << "rank " << r << ": " << out[r].error;
    EXPECT_NE(out[r].error.find("AllGather(count=100"), std::string::npos) << out[r].error;
    EXPECT_NE(out[r].error.find("AllGather(count=200"), std::string::npos) << out[r].error;
  }
  EXPECT_NE(out[0].error.find("rank 0 called AllGather(count=100"), std::string::npos) << out[0].error;
  EXPECT_NE(out[1].error.find("rank 1 called AllGather(count=200"), std::string::npos) << out[1].error;
}

TEST(Mismatch, SameCallsSucceed) {
  std::vector<RankOutcome> out = allgatherWithCounts(100, 100);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(out[r].result, slimecclSuccess) << out[r].error;
}

}  // namespace
