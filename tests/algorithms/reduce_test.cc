// Every Reduce algorithm, simulated at every rank count to 64 and at selected ones to 1024, for
// several roots, every datatype and op, in and out of place at the root: the root's every output
// element, that no other rank touches recv (it may have none), the schedule rules
// (algo_test_support_b.h), and the bytes and messages each rank sends (docs/algorithms.md).
#include <gtest/gtest.h>

#include <set>

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

ReductionCall reduce(Algo algo, int nranks, size_t count, int root) {
  ReductionCall call{Coll::Reduce, algo, nranks, count};
  call.root = root;
  return call;
}

// Two roots per rank count, at varying distances from rank 0.
std::set<int> rootsFor(int nranks) { return {nranks - 1, nranks / 3}; }

class ReduceAlgorithm : public ::testing::TestWithParam<Algo> {};

TEST_P(ReduceAlgorithm, CorrectForEveryRankCountUpTo64) {
  const auto types = allTypes();
  const auto ops = allOps();
  for (int n = 1; n <= 64; ++n)
    for (int root : rootsFor(n))
      for (size_t count : {size_t{1}, static_cast<size_t>(2 * n + 1)})
        for (bool inPlace : {false, true}) {
          // The type and op vary with the rank count so that every pairing shows up in the range.
          ASSERT_TRUE(
              runReduction(withTypeOp(reduce(GetParam(), n, count, root), types[(n + count + root) % types.size()],
                                      ops[(n / 2 + count) % ops.size()], inPlace)));
        }
}

TEST_P(ReduceAlgorithm, CorrectForEveryTypeAndOp) {
  for (int n : {1, 2, 3, 4, 5, 7, 8, 12, 16, 17})
    for (slimecclDataType_t type : allTypes())
      for (slimecclRedOp_t op : allOps())
        for (bool inPlace : {false, true}) {
          ReductionCall call =
              withTypeOp(reduce(GetParam(), n, static_cast<size_t>(n > 1 ? n - 1 : 1), (n * 2) / 3), type, op, inPlace);
          ASSERT_TRUE(runReduction(call));
          call.count = 2 * n + 1;
          ASSERT_TRUE(runReduction(call));
        }
}

TEST_P(ReduceAlgorithm, CorrectForLargeRankCounts) {
  // The rules are checked at 64 ranks and below.
  for (int n : largeRankCounts())
    for (size_t count : {size_t{3}, static_cast<size_t>(n + 1)}) {
      // The simulator's time grows as N^3 for the ring's N^2 steps: above 256 ranks only a few
      // parts are non-empty.
      if (GetParam() == Algo::ReduceScatterGather && n > 256 && count > 3) continue;
      const ReductionCall call = asLargeRankCall(reduce(GetParam(), n, count, (n * 3) / 4));
      ASSERT_TRUE(runReduction(call, nullptr, false));
    }
}

TEST_P(ReduceAlgorithm, CountZeroNeedsNoSteps) { EXPECT_TRUE(countZeroNeedsNoSteps(Coll::Reduce, GetParam())); }

INSTANTIATE_TEST_SUITE_P(All, ReduceAlgorithm, ::testing::ValuesIn(algorithmsFor(Coll::Reduce)),
                         [](const ::testing::TestParamInfo<Algo>& info) { return std::string(algoName(info.param)); });

TEST(ReduceTree, EveryRankButTheRootSendsTheVectorOnce) {
  for (int n = 1; n <= 64; ++n)
    for (int root : rootsFor(n)) {
      ReductionRun run;
      ASSERT_TRUE(runReduction(reduce(Algo::Tree, n, 7, root), &run));
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(run.simulation.bytesSent[r], r == root ? 0u : 7u * 4) << "nranks " << n << " rank " << r;
        EXPECT_EQ(run.simulation.rounds[r], r == root ? 0u : 1u);
      }
      // The root combines ceil(log2 N) partial results: one per round of the tree.
      size_t rootReductions = 0, rounds = 0;
      for (const Step& st : run.schedules[root].steps) rootReductions += st.kind == StepKind::RecvReduce;
      while ((1 << rounds) < n) ++rounds;
      EXPECT_EQ(rootReductions, rounds) << "nranks " << n;
    }
}

TEST(ReduceTree, ChildrenAreAtPowersOfTwoFromTheRank) {
  // Eight ranks, root 3: relative rank v = (r - 3) mod 8. Relative rank 4 (rank 7) receives from
  // relative ranks 5 and 6 (ranks 0 and 1), then sends to relative rank 0 (rank 3).
  ScheduleRequest request{Coll::Reduce, Algo::Tree, 4, 4, slimecclSum, 3, false, 8, 7, nullptr};
  const Schedule s = buildCollective(request);
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_EQ(s.steps[0].kind, StepKind::RecvReduce);
  EXPECT_EQ(s.steps[0].peer, 0);
  EXPECT_EQ(s.steps[1].kind, StepKind::RecvReduce);
  EXPECT_EQ(s.steps[1].peer, 1);
  EXPECT_EQ(s.steps[2].kind, StepKind::Send);
  EXPECT_EQ(s.steps[2].peer, 3);
  // The partial result streams from one reduction to the next and on to the parent.
  EXPECT_EQ(s.steps[1].dependsOn, 0);
  EXPECT_EQ(s.steps[2].dependsOn, 1);
  EXPECT_EQ(s.steps[2].src.buffer, BufferId::Scratch);
}

TEST(ReduceReduceScatterGather, EveryRankSendsTheVectorOnceTheRootAllButItsPart) {
  for (int n = 2; n <= 64; ++n)
    for (int root : {0, n / 2})
      for (size_t count : {static_cast<size_t>(n - 1), static_cast<size_t>(3 * n)}) {
        ReductionRun run;
        ASSERT_TRUE(runReduction(reduce(Algo::ReduceScatterGather, n, count, root), &run));
        for (int r = 0; r < n; ++r) {
          const size_t vector = count * 4, own = partOf(count, 4, n, r).bytes;
          EXPECT_EQ(run.simulation.bytesSent[r], r == root ? vector - own : vector)
              << "nranks " << n << " root " << root << " rank " << r << " count " << count;
        }
      }
}

}  // namespace
}  // namespace slimeccl
