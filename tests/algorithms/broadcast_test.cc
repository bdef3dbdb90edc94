// Every Broadcast algorithm, simulated at every rank count to 64 and at selected ones to 1024,
// from several roots, in and out of place, with counts that split evenly, unevenly and into
// fewer elements than ranks: every byte of every rank's output, the bytes (and, where they are the
// point, the messages) each rank sends (docs/algorithms.md), and the schedule rules
// (algo_test_support_a.h; among them: no rank but the root touches a Send buffer).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "algorithms/partition.h"
#include "src/op.h"
#include "tests/algorithms/algo_test_support_a.h"

namespace slimeccl {
namespace {

struct BroadcastCase {
  Algo algo;
  int nranks;
  int root;
  size_t count;
  slimecclDataType_t type;
  bool inPlace;
};

int lowestBit(int v) { return v & -v; }

// Binomial tree: relative rank v sends the vector to v + 2^j for every 2^j below its lowest set
// bit (the root: below N).
size_t treeChildren(int nranks, int v) {
  int below = 1;
  while (below < nranks) below *= 2;
  if (v != 0) below = lowestBit(v);
  size_t children = 0;
  for (int distance = 1; distance < below; distance *= 2) children += v + distance < nranks;
  return children;
}

// Scatter + AllGather: v passes its children their subtrees' parts (its own subtree but its own
// part), then sends down the ring every part but those of the subtree of v - 1 (the root's: all).
size_t scatterAllGatherBytes(const BroadcastCase& c, int v) {
  const size_t typeBytes = typeSize(c.type), vectorBytes = c.count * typeBytes;
  auto subtreeBytes = [&](int u) {
    return u == 0 ? vectorBytes : partsOf(c.count, typeBytes, c.nranks, u, std::min(lowestBit(u), c.nranks - u)).bytes;
  };
  const size_t scattered = subtreeBytes(v) - partOf(c.count, typeBytes, c.nranks, v).bytes;
  return scattered + vectorBytes - subtreeBytes((v - 1 + c.nranks) % c.nranks);
}

void checkBroadcast(const BroadcastCase& c) {
  const size_t bytes = c.count * typeSize(c.type);
  const size_t n = static_cast<size_t>(c.nranks);
  ScheduleRequest request = algotest::makeRequest(Coll::Broadcast, c.algo, c.nranks, c.count, typeSize(c.type));
  request.root = c.root;
  request.inPlace = c.inPlace;
  const std::vector<char> expected = algotest::patternBlock(c.root, 0, bytes);
  // Only the root has input; in place it is in the root's Recv buffer.
  std::vector<RankBuffers> buffers(n);
  for (size_t r = 0; r < n; ++r) buffers[r].recv.assign(bytes, algotest::kUnwritten);
  (c.inPlace ? buffers[c.root].recv : buffers[c.root].send) = expected;
  SimulationResult result;
  const std::string error = algotest::buildCheckAndSimulate(request, buffers, &result);
  ASSERT_EQ(error, "") << algotest::describeRequest(request);
  size_t totalSent = 0;
  for (size_t r = 0; r < n; ++r) {
    ASSERT_EQ(algotest::firstDifference(expected, buffers[r].recv, 0), "")
        << algotest::describeRequest(request) << ": output of rank " << r;
    const int v = (static_cast<int>(r) - c.root + c.nranks) % c.nranks;
    switch (c.algo) {
      case Algo::Tree:
        ASSERT_EQ(result.rounds[r], treeChildren(c.nranks, v)) << algotest::describeRequest(request) << ": rank " << r;
        ASSERT_EQ(result.bytesSent[r], treeChildren(c.nranks, v) * bytes)
            << algotest::describeRequest(request) << ": rank " << r;
        break;
      case Algo::Chain:
        ASSERT_EQ(result.rounds[r], v + 1 < c.nranks ? 1u : 0u) << algotest::describeRequest(request) << ": rank " << r;
        ASSERT_EQ(result.bytesSent[r], v + 1 < c.nranks ? bytes : 0)
            << algotest::describeRequest(request) << ": rank " << r;
        break;
      default:
        ASSERT_EQ(result.bytesSent[r], scatterAllGatherBytes(c, v))
            << algotest::describeRequest(request) << ": rank " << r;
        break;
    }
    totalSent += result.bytesSent[r];
  }
  // Every algorithm delivers the vector to each of the other ranks exactly once.
  EXPECT_EQ(totalSent, (n - 1) * bytes) << algotest::describeRequest(request);
}

std::set<int> rootsFor(int nranks) { return {0, nranks > 1 ? 1 : 0, nranks / 2, nranks - 1}; }

// Counts below, at and above the rank count: some parts empty, all equal, uneven.
std::set<size_t> countsFor(int nranks) {
  const size_t n = static_cast<size_t>(nranks);
  return {1, std::max<size_t>(n - 1, 1), n, 2 * n + 3};
}

class BroadcastAlgorithm : public testing::TestWithParam<Algo> {};

// Every root and count; the data type and in place or not take turns, so that each rank count
// from 2 on sees all four of their combinations.
TEST_P(BroadcastAlgorithm, CorrectForEveryRankCountUpTo64) {
  for (int n : algotest::ranksUpTo64()) {
    int turn = 0;
    for (int root : rootsFor(n))
      for (size_t count : countsFor(n)) {
        checkBroadcast({GetParam(), n, root, count, turn / 2 % 2 == 0 ? slimecclInt8 : slimecclFloat32, turn % 2 == 1});
        ++turn;
      }
  }
}

// Scatter + AllGather has a number of steps that grows with the rank count.
TEST_P(BroadcastAlgorithm, CorrectForLargeRankCounts) {
  for (int n : algotest::largeRankCounts(1024)) {
    checkBroadcast({GetParam(), n, 0, static_cast<size_t>(n / 3), slimecclInt8, false});
    checkBroadcast({GetParam(), n, n / 2 + 1, static_cast<size_t>(n + 5), slimecclFloat32, true});
  }
}

TEST_P(BroadcastAlgorithm, CountZeroNeedsNoSteps) {
  ScheduleRequest request = algotest::makeRequest(Coll::Broadcast, GetParam(), 4, 0, 4);
  request.rank = 1;
  EXPECT_TRUE(buildCollective(request).steps.empty());
}

INSTANTIATE_TEST_SUITE_P(Every, BroadcastAlgorithm, testing::ValuesIn(algorithmsFor(Coll::Broadcast)),
                         [](const testing::TestParamInfo<Algo>& info) { return std::string(algoName(info.param)); });

TEST(BroadcastTree, RootSendsToHalvingDistancesFromTheRoot) {
  ScheduleRequest request = algotest::makeRequest(Coll::Broadcast, Algo::Tree, 11, 4, 1);
  request.root = 3;
  request.rank = 3;
  std::vector<int> peers;
  for (const Step& step : buildCollective(request).steps)
    if (step.kind == StepKind::Send) peers.push_back(step.peer);
  EXPECT_EQ(peers, (std::vector<int>{(3 + 8) % 11, 3 + 4, 3 + 2, 3 + 1}));
}

TEST(BroadcastChain, EachRankForwardsItsReceiveChunkByChunk) {
  ScheduleRequest request = algotest::makeRequest(Coll::Broadcast, Algo::Chain, 5, 4, 1);
  request.root = 2;
  request.rank = 4;
  const Schedule s = buildCollective(request);
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].kind, StepKind::Recv);
  EXPECT_EQ(s.steps[0].peer, 3);
  EXPECT_EQ(s.steps[1].kind, StepKind::Send);
  EXPECT_EQ(s.steps[1].peer, 0);
  EXPECT_EQ(s.steps[1].dependsOn, 0);
  // Same range as the receive: the executor streams it chunk by chunk.
  EXPECT_EQ(s.steps[1].src.offset, s.steps[0].dst.offset);
  EXPECT_EQ(s.steps[1].src.bytes, s.steps[0].dst.bytes);
}

TEST(BroadcastScatterAllGather, TheRootReceivesNothing) {
  for (int n : {2, 7, 16}) {
    ScheduleRequest request = algotest::makeRequest(Coll::Broadcast, Algo::ScatterAllGather, n, 100, 4);
    request.root = 1;
    request.rank = 1;
    for (const Step& step : buildCollective(request).steps) EXPECT_NE(step.kind, StepKind::Recv) << "nranks " << n;
  }
}

}  // namespace
}  // namespace slimeccl
