// The GPU reduction plans (algorithms/gpu_reduction.h), run by their simulator on host memory:
// every collective and algorithm that fits, in and out of place, at rank counts from 1 to 9 and
// counts around the 16-byte words that two-shot splits on, against results computed without the
// library's kernels; the simulator itself catches a plan whose ranks race.
#include <gtest/gtest.h>

#include <cstring>

#include "algorithms/gpu_reduction.h"
#include "algorithms/gpu_reduction_simulator.h"
#include "tests/algorithms/algo_test_support_b.h"

namespace slimeccl {
namespace {

using reductiontest::allOps;
using reductiontest::allTypes;
using reductiontest::bytesOf;
using reductiontest::encode;
using reductiontest::expectedElement;
using reductiontest::inputValue;
using reductiontest::show;

struct Case {
  Coll coll;
  GpuReductionAlgo algo;
  int nranks;
  size_t count;
  slimecclDataType_t type;
  slimecclRedOp_t op;
  bool inPlace;
  int root;
};

std::string describe(const Case& c) {
  return std::string(c.coll == Coll::AllReduce ? "AllReduce"
                     : c.coll == Coll::Reduce  ? "Reduce"
                                               : "ReduceScatter") +
         " " + gpuReductionAlgoName(c.algo) + " nranks=" + std::to_string(c.nranks) +
         " count=" + std::to_string(c.count) + " type=" + std::to_string(c.type) + " op=" + std::to_string(c.op) +
         (c.inPlace ? " in place" : "") + " root=" + std::to_string(c.root);
}

// Runs the case and checks every output element; "" when all match.
std::string runCase(const Case& c) {
  const size_t elem = bytesOf(c.type);
  const size_t inputCount = c.coll == Coll::ReduceScatter ? c.count * c.nranks : c.count;
  std::vector<RankBuffers> buffers(c.nranks);
  for (int r = 0; r < c.nranks; ++r) {
    for (size_t i = 0; i < inputCount; ++i) {
      const std::vector<char> e = encode(c.type, static_cast<double>(inputValue(c.type, c.op, c.nranks, r, i)));
      buffers[r].send.insert(buffers[r].send.end(), e.begin(), e.end());
    }
    const bool hasOutput = c.coll != Coll::Reduce || r == c.root;
    buffers[r].recv.assign(hasOutput ? c.count * elem : 0, 0x5a);
  }
  GpuReductionRequest request{c.coll, c.algo, c.nranks, 0, c.root, c.count, elem, c.inPlace};
  const GpuReductionCheck check = simulateGpuReduction(request, buffers, c.type, c.op);
  if (!check.ok) return check.error;
  for (int r = 0; r < c.nranks; ++r) {
    if (buffers[r].recv.empty()) continue;
    for (size_t i = 0; i < c.count; ++i) {
      const size_t index = c.coll == Coll::ReduceScatter ? r * c.count + i : i;
      std::vector<int64_t> values;
      for (int p = 0; p < c.nranks; ++p) values.push_back(inputValue(c.type, c.op, c.nranks, p, index));
      const std::vector<char> want = expectedElement(c.type, c.op, values);
      const char* got = buffers[r].recv.data() + i * elem;
      if (memcmp(got, want.data(), elem) != 0)
        return "rank " + std::to_string(r) + " element " + std::to_string(i) + ": got " + show(c.type, got) +
               ", want " + show(c.type, want.data());
    }
  }
  return "";
}

const Coll kColls[] = {Coll::AllReduce, Coll::ReduceScatter, Coll::Reduce};

TEST(GpuReductionPlans, EveryFittingAlgorithmReducesCorrectlyAcrossRanksAndCounts) {
  int cases = 0;
  for (Coll coll : kColls)
    for (GpuReductionAlgo algo : kGpuReductionAlgos)
      for (bool inPlace : {false, true}) {
        if (!gpuReductionAlgoFits(coll, algo, inPlace)) continue;
        for (int nranks = 1; nranks <= 9; ++nranks)
          for (size_t count : {0, 1, 3, 7, 8, 15, 16, 17, 33, 100, 1023})
            for (int root : {0, nranks - 1}) {
              if (coll != Coll::Reduce && root != 0) continue;
              const Case c{coll, algo, nranks, count, slimecclInt32, slimecclSum, inPlace, root};
              const std::string error = runCase(c);
              EXPECT_EQ(error, "") << describe(c);
              ++cases;
            }
      }
  EXPECT_GT(cases, 1000);
}

TEST(GpuReductionPlans, EveryTypeAndOpMatchesTheReference) {
  for (slimecclDataType_t type : allTypes())
    for (slimecclRedOp_t op : allOps())
      for (Coll coll : kColls)
        for (GpuReductionAlgo algo : kGpuReductionAlgos) {
          if (!gpuReductionAlgoFits(coll, algo, false)) continue;
          const Case c{coll, algo, 5, 37, type, op, false, 2};
          EXPECT_EQ(runCase(c), "") << describe(c);
        }
}

TEST(GpuReductionPlans, TwoShotSplitsOnWholeWordsAndCoversTheVector) {
  for (size_t typeBytes : {1, 2, 4, 8})
    for (int nranks : {1, 2, 3, 8})
      for (size_t count : {1, 9, 1000, 4097}) {
        const size_t chunk = twoShotChunkElements(count, typeBytes, nranks);
        EXPECT_EQ(chunk * typeBytes % 16, 0u);
        EXPECT_GE(chunk * nranks, count);
        size_t covered = 0;
        for (int r = 0; r < nranks; ++r) {
          const GpuReductionPlan plan =
              planGpuReduction({Coll::AllReduce, GpuReductionAlgo::TwoShot, nranks, r, 0, count, typeBytes, false});
          ASSERT_EQ(plan.steps.size(), 1u);
          if (plan.steps[0].count != 0) {
            EXPECT_EQ(plan.steps[0].sources[0].offset, covered);
          }
          covered += plan.steps[0].count;
        }
        EXPECT_EQ(covered, count);
      }
}

TEST(GpuReductionPlans, TheSimulatorCatchesOneShotInPlaceAsARace) {
  EXPECT_FALSE(gpuReductionAlgoFits(Coll::AllReduce, GpuReductionAlgo::OneShot, true));
  const Case c{Coll::AllReduce, GpuReductionAlgo::OneShot, 2, 64, slimecclInt32, slimecclSum, true, 0};
  EXPECT_NE(runCase(c).find("race: rank 0 writes rank 0's send"), std::string::npos) << runCase(c);
}

// Reduce's two-shot-sm on 3 or more ranks leaves the root out: the others cover the vector, each
// writing its chunk into the root's output only.
TEST(GpuReductionPlans, ReduceTwoShotSmCutsTheVectorAmongTheRanksBesideTheRoot) {
  for (int nranks : {3, 4, 8})
    for (int root : {0, nranks - 1}) {
      size_t covered = 0;
      for (int r = 0; r < nranks; ++r) {
        const GpuReductionPlan plan =
            planGpuReduction({Coll::Reduce, GpuReductionAlgo::TwoShotSm, nranks, r, root, 4099, 4, false});
        ASSERT_EQ(plan.steps.size(), 1u);
        const GpuReductionStep& step = plan.steps[0];
        if (r == root) {
          EXPECT_EQ(step.count, 0u);
          continue;
        }
        ASSERT_EQ(step.destinations.size(), 1u);
        EXPECT_EQ(step.destinations[0].rank, root);
        covered += step.count;
      }
      EXPECT_EQ(covered, 4099u) << nranks << " ranks, root " << root;
    }
}

// A ring whose steps do not wait for the left neighbour's: a rank would read a partial result
// before the neighbour has written it.
TEST(GpuReductionPlans, TheSimulatorCatchesARingThatDoesNotWait) {
  const int nranks = 4;
  const size_t count = 64;
  GpuReductionRequest request{Coll::AllReduce, GpuReductionAlgo::Ring, nranks, 0, 0, count, 4, false};
  std::vector<GpuReductionPlan> plans;
  for (int r = 0; r < nranks; ++r) {
    request.rank = r;
    plans.push_back(planGpuReduction(request));
    EXPECT_EQ(plans.back().steps.size(), size_t{nranks - 1});
    EXPECT_EQ(plans.back().waitsFor, (r + nranks - 1) % nranks);
    plans.back().waitsFor = plans.back().signals = -1;
  }
  std::vector<RankBuffers> buffers(nranks);
  for (RankBuffers& b : buffers) {
    b.send.assign(count * 4, 1);
    b.recv.assign(count * 4, 0);
  }
  const GpuReductionCheck check = simulateGpuReductionPlans(request, plans, buffers, slimecclInt32, slimecclSum);
  EXPECT_FALSE(check.ok);
  EXPECT_NE(check.error.find("race: rank"), std::string::npos) << check.error;
}

// Each rank's gather copies its own chunk, and a ring rank reads only its left neighbour.
TEST(GpuReductionPlans, RingReadsOnlyTheLeftNeighbourAndGathersItsChunk) {
  const int nranks = 5;
  for (int r = 0; r < nranks; ++r) {
    const GpuReductionPlan plan =
        planGpuReduction({Coll::AllReduce, GpuReductionAlgo::Ring, nranks, r, 0, 1000, 4, false});
    for (const GpuReductionStep& step : plan.steps)
      for (const RankSpan& s : step.sources) EXPECT_TRUE(s.rank == r || s.rank == (r + nranks - 1) % nranks);
    ASSERT_EQ(plan.gathers.size(), size_t{nranks - 1});
    for (const GatherCopy& g : plan.gathers) {
      EXPECT_EQ(g.from.rank, r);
      EXPECT_EQ(g.from.offset, g.to.offset);
      EXPECT_NE(g.to.rank, r);
    }
  }
}

// Reduce's ring keeps its partial results in the root's output: in place that is the root's input,
// which the ring overwrites (in order, so no race) before the root has read it: wrong results.
TEST(GpuReductionPlans, ReduceRingInPlaceWouldOverwriteTheRootsInput) {
  EXPECT_FALSE(gpuReductionAlgoFits(Coll::Reduce, GpuReductionAlgo::Ring, true));
  EXPECT_TRUE(gpuReductionAlgoFits(Coll::Reduce, GpuReductionAlgo::Ring, false));
  const Case c{Coll::Reduce, GpuReductionAlgo::Ring, 4, 64, slimecclInt32, slimecclSum, true, 0};
  EXPECT_NE(runCase(c).find("rank 0 element"), std::string::npos) << runCase(c);
}

TEST(GpuReductionPlans, AlgorithmNamesRoundTrip) {
  for (GpuReductionAlgo algo : kGpuReductionAlgos) {
    GpuReductionAlgo parsed;
    ASSERT_TRUE(parseGpuReductionAlgo(gpuReductionAlgoName(algo), &parsed));
    EXPECT_EQ(parsed, algo);
  }
  GpuReductionAlgo parsed;
  EXPECT_FALSE(parseGpuReductionAlgo("tree", &parsed));
}

}  // namespace
}  // namespace slimeccl
