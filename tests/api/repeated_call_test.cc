// The same call made again and again with the same buffers (a training step, a perf loop) runs
// from a cached plan: every round must still move that round's data, and a call that stops
// matching its peer's must still fail on both sides.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "harness.h"
#include "launch_case.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

constexpr int kRounds = 12;

int32_t value(int rank, int round, size_t index) {
  return static_cast<int32_t>(rank * 1000003 + round * 7919 + static_cast<int>(index));
}

void fill(std::vector<int32_t>& buffer, int rank, int round) {
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = value(rank, round, i);
}

void expectFrom(const std::vector<int32_t>& buffer, int rank, int round, const char* what) {
  for (size_t i = 0; i < buffer.size(); ++i)
    RANK_CHECK(buffer[i] == value(rank, round, i), what, ", round ", round, ": element ", i, " is ", buffer[i],
               " where rank ", rank, " sent ", value(rank, round, i));
}

class RepeatedCall : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(RepeatedCall, RingSendRecvMovesEachRoundsData) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    // Each round fills `out` and expects the left neighbour's round in `in`.
    auto rounds = [&](std::vector<int32_t>& out, std::vector<int32_t>& in, const char* what) {
      for (int round = 0; round < kRounds; ++round) {
        fill(out, rank, round);
        RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
        RANK_CHECK_SUCCESS(slimecclSend(out.data(), out.size(), slimecclInt32, right, comm, nullptr), comm);
        RANK_CHECK_SUCCESS(slimecclRecv(in.data(), in.size(), slimecclInt32, left, comm, nullptr), comm);
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
        expectFrom(in, left, round, what);
      }
    };
    // Small (inline in the header) and a few chunks; out of place and in place.
    for (size_t count : {size_t{2}, size_t{70000}}) {
      std::vector<int32_t> out(count), in(count), both(count);
      rounds(out, in, "out of place");
      rounds(both, both, "in place");
    }
  });
}

TEST_P(RepeatedCall, CollectivesMoveEachRoundsData) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    constexpr size_t kCount = 300;
    std::vector<int32_t> mine(kCount), gathered(kCount * nranks), reduced(kCount), broadcast(kCount);
    for (int round = 0; round < kRounds; ++round) {
      fill(mine, rank, round);
      RANK_CHECK_SUCCESS(slimecclAllGather(mine.data(), gathered.data(), kCount, slimecclInt32, comm, nullptr), comm);
      for (int r = 0; r < nranks; ++r) {
        std::vector<int32_t> block(gathered.begin() + r * kCount, gathered.begin() + (r + 1) * kCount);
        expectFrom(block, r, round, "AllGather");
      }
      RANK_CHECK_SUCCESS(
          slimecclAllReduce(mine.data(), reduced.data(), kCount, slimecclInt32, slimecclSum, comm, nullptr), comm);
      for (size_t i = 0; i < kCount; ++i) {
        int64_t sum = 0;
        for (int r = 0; r < nranks; ++r) sum += value(r, round, i);
        RANK_CHECK(reduced[i] == static_cast<int32_t>(sum), "AllReduce round ", round, " element ", i);
      }
      // Roots take turns: each root is a plan of its own in the cache.
      const int root = round % nranks;
      fill(broadcast, rank, round);
      RANK_CHECK_SUCCESS(
          slimecclBroadcast(broadcast.data(), broadcast.data(), kCount, slimecclInt32, root, comm, nullptr), comm);
      expectFrom(broadcast, root, round, "Broadcast");
    }
  });
}

TEST_P(RepeatedCall, AMismatchAfterRepeatsFailsOnBothSides) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  runRanks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) {
        if (rank > 1) return;
        // Above the eager size, so that the Send sees the mismatch too.
        std::vector<int32_t> buffer(4096, rank);
        for (int round = 0; round <= kRounds; ++round) {
          // The last round, rank 1 expects fewer elements than rank 0 sends.
          size_t count = round == kRounds && rank == 1 ? 3000 : 4096;
          slimecclResult_t result = rank == 0 ? slimecclSend(buffer.data(), count, slimecclInt32, 1, comm, nullptr)
                                              : slimecclRecv(buffer.data(), count, slimecclInt32, 0, comm, nullptr);
          slimecclResult_t expected = round == kRounds ? slimecclInvalidUsage : slimecclSuccess;
          RANK_CHECK(result == expected, "round ", round, ": ", rank == 0 ? "Send" : "Recv", " returned ",
                     resultName(result), "; last error: ", lastErrorText(comm));
        }
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Launches, RepeatedCall,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                         {2, 3})),
                         launchCaseName);

}  // namespace
}  // namespace slimeccl_test
