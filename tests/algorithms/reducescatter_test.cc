// Every ReduceScatter algorithm, simulated at every rank count to 64 and at selected ones to
// 1024, for every datatype and op, in and out of place: every output element, the schedule rules
// (algo_test_support_b.h), and the bytes and messages each rank sends (docs/algorithms.md).
#include <gtest/gtest.h>

#include "tests/algorithms/algo_test_support_b.h"

namespace slimeccl {
namespace {

using reductiontest::allOps;
using reductiontest::allTypes;
using reductiontest::asLargeRankCall;
using reductiontest::countZeroNeedsNoSteps;
using reductiontest::largeRankCounts;
using reductiontest::ReductionCall;
using reductiontest::ReductionRun;
using reductiontest::runReduction;
using reductiontest::withTypeOp;

ReductionCall reduceScatter(Algo algo, int nranks, size_t count) {
  return ReductionCall{Coll::ReduceScatter, algo, nranks, count};
}

class ReduceScatterAlgorithm : public ::testing::TestWithParam<Algo> {};

TEST_P(ReduceScatterAlgorithm, CorrectForEveryRankCountUpTo64) {
  const auto types = allTypes();
  const auto ops = allOps();
  for (int n = 1; n <= 64; ++n)
    for (size_t count = 1; count <= 3; ++count)
      for (bool inPlace : {false, true}) {
        // The type and op vary with the rank count so that every pairing shows up in the range.
        ASSERT_TRUE(runReduction(withTypeOp(reduceScatter(GetParam(), n, count), types[(n + count) % types.size()],
                                            ops[(n / 2 + count) % ops.size()], inPlace)));
      }
}

TEST_P(ReduceScatterAlgorithm, CorrectForEveryTypeAndOp) {
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17})
    for (slimecclDataType_t type : allTypes())
      for (slimecclRedOp_t op : allOps())
        for (bool inPlace : {false, true}) {
          ASSERT_TRUE(runReduction(withTypeOp(reduceScatter(GetParam(), n, 3), type, op, inPlace)));
        }
}

TEST_P(ReduceScatterAlgorithm, CorrectForLargeRankCounts) {
  // The rules are checked at 64 ranks and below.
  for (int n : largeRankCounts()) {
    const ReductionCall call = asLargeRankCall(reduceScatter(GetParam(), n, 1));
    ASSERT_TRUE(runReduction(call, nullptr, false));
  }
}

TEST_P(ReduceScatterAlgorithm, CountZeroNeedsNoSteps) {
  EXPECT_TRUE(countZeroNeedsNoSteps(Coll::ReduceScatter, GetParam()));
}

INSTANTIATE_TEST_SUITE_P(All, ReduceScatterAlgorithm, ::testing::ValuesIn(algorithmsFor(Coll::ReduceScatter)),
                         [](const ::testing::TestParamInfo<Algo>& info) { return std::string(algoName(info.param)); });

TEST(ReduceScatterRing, EachRankSendsNMinusOneBlocks) {
  for (int n = 1; n <= 64; ++n) {
    ReductionRun run;
    ReductionCall call = reduceScatter(Algo::Ring, n, 3);
    ASSERT_TRUE(runReduction(call, &run));
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(run.simulation.bytesSent[r], static_cast<size_t>(n - 1) * 3 * 4) << "nranks " << n << " rank " << r;
      EXPECT_EQ(run.simulation.rounds[r], static_cast<size_t>(n - 1));
    }
  }
}

TEST(ReduceScatterRing, ForwardsEachPartialResultAsItIsReduced) {
  ScheduleRequest request{Coll::ReduceScatter, Algo::Ring, 2, 4, slimecclSum, 0, false, 5, 1, nullptr};
  const Schedule s = buildCollective(request);
  ASSERT_EQ(s.steps.size(), 2u * 4);
  for (int step = 0; step < 4; ++step) {
    const Step& send = s.steps[2 * step];
    const Step& reduce = s.steps[2 * step + 1];
    EXPECT_EQ(send.kind, StepKind::Send);
    EXPECT_EQ(send.peer, 2);
    EXPECT_EQ(reduce.kind, StepKind::RecvReduce);
    EXPECT_EQ(reduce.peer, 0);
    // Rank 1 reduces block (1 - step - 2) mod 5 with its own input of that block.
    EXPECT_EQ(reduce.src.buffer, BufferId::Send);
    EXPECT_EQ(reduce.src.offset, static_cast<size_t>((1 - step - 2 + 10) % 5) * 8);
    if (step > 0) {
      EXPECT_EQ(send.dependsOn, 2 * step - 1) << "step " << step;
    }
  }
  EXPECT_EQ(s.steps[0].src.buffer, BufferId::Send);  // the first block sent is plain input
  EXPECT_EQ(s.steps[7].dst.buffer, BufferId::Recv);  // the last reduction completes block 1
  EXPECT_EQ(s.scratchBytes, 2u * 8);                 // two slots take turns
}

TEST(ReduceScatterHalving, PowersOfTwoTakeLog2NStepsWithRankXorDistance) {
  for (int n : {2, 4, 8, 16, 32, 64}) {
    ReductionRun run;
    ASSERT_TRUE(runReduction(reduceScatter(Algo::HalvingDoubling, n, 2), &run));
    int log2n = 0;
    while ((1 << log2n) < n) ++log2n;
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(run.simulation.rounds[r], static_cast<size_t>(log2n)) << "nranks " << n << " rank " << r;
      EXPECT_EQ(run.simulation.bytesSent[r], static_cast<size_t>(n - 1) * 2 * 4);
      int distance = n / 2;
      for (const Step& st : run.schedules[r].steps) {
        if (st.kind != StepKind::Send) continue;
        EXPECT_EQ(st.peer, r ^ distance);
        // Each step sends half of what the previous one did.
        EXPECT_EQ(st.src.bytes, static_cast<size_t>(distance) * 2 * 4);
        distance /= 2;
      }
    }
  }
}

TEST(ReduceScatterHalving, OtherRankCountsFoldIntoAPowerOfTwo) {
  for (int n = 3; n <= 64; ++n) {
    int p = 1;
    while (p * 2 <= n) p *= 2;
    if (p == n) continue;
    ReductionRun run;
    ASSERT_TRUE(runReduction(reduceScatter(Algo::HalvingDoubling, n, 1), &run));
    const size_t block = 4;
    for (int r = 0; r < n; ++r) {
      // An odd rank among the first 2(N - P) sends its whole input once; every other rank sends
      // every block but its own once.
      const bool foldsAway = r < 2 * (n - p) && r % 2 == 1;
      EXPECT_EQ(run.simulation.bytesSent[r], (foldsAway ? n : n - 1) * block) << "nranks " << n << " rank " << r;
    }
  }
}

}  // namespace
}  // namespace slimeccl
