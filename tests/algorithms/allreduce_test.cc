// Every AllReduce algorithm, simulated at every rank count to 64 and at selected ones to 1024,
// for every datatype and op, in and out of place, with counts below, at and off multiples of the
// rank count: every output element, the schedule rules (algo_test_support_b.h), and the bytes and
// messages each rank sends (docs/algorithms.md).
#include <gtest/gtest.h>

#include "algorithms/partition.h"
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

ReductionCall allReduce(Algo algo, int nranks, size_t count) {
  return ReductionCall{Coll::AllReduce, algo, nranks, count};
}

int log2Of(int n) {
  int k = 0;
  while ((1 << (k + 1)) <= n) ++k;
  return k;
}

// Counts below the rank count and not a multiple of it (multiples have tests of their own).
std::vector<size_t> countsFor(int nranks) {
  std::vector<size_t> counts{1, static_cast<size_t>(2 * nranks + 1)};
  if (nranks > 2) counts.push_back(static_cast<size_t>(nranks - 1));
  return counts;
}

class AllReduceAlgorithm : public ::testing::TestWithParam<Algo> {};

TEST_P(AllReduceAlgorithm, CorrectForEveryRankCountUpTo64) {
  const auto types = allTypes();
  const auto ops = allOps();
  for (int n = 1; n <= 64; ++n)
    for (size_t count : countsFor(n))
      for (bool inPlace : {false, true}) {
        // The type and op vary with the rank count so that every pairing shows up in the range.
        ASSERT_TRUE(runReduction(withTypeOp(allReduce(GetParam(), n, count), types[(n + count) % types.size()],
                                            ops[(n / 2 + count) % ops.size()], inPlace)));
      }
}

TEST_P(AllReduceAlgorithm, CorrectForEveryTypeAndOp) {
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17})
    for (slimecclDataType_t type : allTypes())
      for (slimecclRedOp_t op : allOps())
        for (bool inPlace : {false, true})
          for (size_t count : {static_cast<size_t>(n > 1 ? n - 1 : 1), static_cast<size_t>(2 * n + 1)}) {
            ASSERT_TRUE(runReduction(withTypeOp(allReduce(GetParam(), n, count), type, op, inPlace)));
          }
}

TEST_P(AllReduceAlgorithm, CorrectForLargeRankCounts) {
  // The rules are checked at 64 ranks and below.
  for (int n : largeRankCounts())
    for (size_t count : {size_t{3}, static_cast<size_t>(n + 1)}) {
      const ReductionCall call = asLargeRankCall(allReduce(GetParam(), n, count));
      ASSERT_TRUE(runReduction(call, nullptr, false));
    }
}

TEST_P(AllReduceAlgorithm, CountZeroNeedsNoSteps) { EXPECT_TRUE(countZeroNeedsNoSteps(Coll::AllReduce, GetParam())); }

INSTANTIATE_TEST_SUITE_P(All, AllReduceAlgorithm, ::testing::ValuesIn(algorithmsFor(Coll::AllReduce)),
                         [](const ::testing::TestParamInfo<Algo>& info) { return std::string(algoName(info.param)); });

TEST(AllReduceRing, SendsEveryPartButOneTwice) {
  for (int n = 2; n <= 64; ++n)
    for (size_t count : {static_cast<size_t>(n + 1), static_cast<size_t>(3 * n)}) {
      ReductionRun run;
      ASSERT_TRUE(runReduction(allReduce(Algo::Ring, n, count), &run));
      for (int r = 0; r < n; ++r) {
        // ReduceScatter sends every part but r, AllGather every part but r + 1.
        const size_t own = partOf(count, 4, n, r).bytes, next = partOf(count, 4, n, (r + 1) % n).bytes;
        EXPECT_EQ(run.simulation.bytesSent[r], 2 * count * 4 - own - next) << "nranks " << n << " count " << count;
        if (count % n == 0) {
          EXPECT_EQ(run.simulation.bytesSent[r] * n, 2 * (n - 1) * count * 4);
        }
      }
    }
}

TEST(AllReduceRing, NoStepsForEmptyParts) {
  // Three elements on eight ranks: parts 3 .. 7 are empty, and only the ranks next to parts 0 .. 2
  // move data.
  ReductionRun run;
  ASSERT_TRUE(runReduction(allReduce(Algo::Ring, 8, 3), &run));
  size_t messages = 0;
  for (const Schedule& s : run.schedules)
    for (const Step& st : s.steps) messages += st.kind == StepKind::Send;
  // Each non-empty part travels N - 1 hops to be reduced and N - 1 hops to be gathered.
  EXPECT_EQ(messages, 3u * 2 * 7);
}

TEST(AllReduceRabenseifner, SendsTwiceTheVectorLessTheOwnPartsInTwoLog2NSteps) {
  for (int n : {2, 4, 8, 16, 32, 64}) {
    ReductionRun run;
    ASSERT_TRUE(runReduction(allReduce(Algo::HalvingDoubling, n, 3 * n), &run));
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(run.simulation.bytesSent[r] * n, 2 * (n - 1) * 3 * n * 4) << "nranks " << n << " rank " << r;
      EXPECT_EQ(run.simulation.rounds[r], 2u * log2Of(n));
    }
  }
}

TEST(AllReduceRabenseifner, OtherRankCountsFoldIntoAPowerOfTwo) {
  for (int n = 3; n <= 64; ++n) {
    const int p = 1 << log2Of(n);
    if (p == n) continue;
    const size_t count = 2 * p, vector = count * 4;
    ReductionRun run;
    ASSERT_TRUE(runReduction(allReduce(Algo::HalvingDoubling, n, count), &run));
    for (int r = 0; r < n; ++r) {
      const bool folded = r < 2 * (n - p);
      const size_t halvingDoubling = 2 * (p - 1) * vector / p;
      size_t expected = folded ? (r % 2 ? vector : halvingDoubling + vector) : halvingDoubling;
      EXPECT_EQ(run.simulation.bytesSent[r], expected) << "nranks " << n << " rank " << r;
    }
  }
}

TEST(AllReduceRecursiveDoubling, SendsTheVectorLog2NTimes) {
  for (int n = 2; n <= 64; ++n) {
    const int p = 1 << log2Of(n);
    const size_t vector = 5 * 4;
    ReductionRun run;
    ASSERT_TRUE(runReduction(allReduce(Algo::RecursiveDoubling, n, 5), &run));
    for (int r = 0; r < n; ++r) {
      const bool folded = r < 2 * (n - p);
      const size_t steps = folded ? (r % 2 ? 1 : log2Of(p) + 1) : log2Of(p);
      EXPECT_EQ(run.simulation.bytesSent[r], steps * vector) << "nranks " << n << " rank " << r;
      EXPECT_EQ(run.simulation.rounds[r], steps);
      if (p == n) {
        // Step k exchanges with rank XOR 2^k.
        int distance = 1;
        for (const Step& st : run.schedules[r].steps)
          if (st.kind == StepKind::Send) {
            EXPECT_EQ(st.peer, r ^ distance);
            distance *= 2;
          }
      }
    }
  }
}

}  // namespace
}  // namespace slimeccl
