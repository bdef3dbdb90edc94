// Every AlltoAll algorithm, simulated at every rank count to 64 and at selected ones to 1024:
// every byte of every rank's output, the bytes and messages each rank sends (docs/algorithms.md),
// and the schedule rules (algo_test_support_a.h).
#include <gtest/gtest.h>

#include <algorithm>

#include "src/op.h"
#include "tests/algorithms/algo_test_support_a.h"

namespace slimeccl {
namespace {

using algotest::Traffic;

int ceilLog2(int n) {
  int bits = 0;
  while ((1 << bits) < n) ++bits;
  return bits;
}

// Bruck: round k moves the blocks whose distance to their destination has bit k set.
size_t bruckBlocksSent(int nranks) {
  size_t blocks = 0;
  for (int distance = 0; distance < nranks; ++distance) blocks += static_cast<size_t>(__builtin_popcount(distance));
  return blocks;
}

Traffic expectedTraffic(Algo algo, int nranks, size_t blockBytes) {
  if (algo == Algo::Bruck) return {bruckBlocksSent(nranks) * blockBytes, static_cast<size_t>(ceilLog2(nranks))};
  return {static_cast<size_t>(nranks - 1) * blockBytes, static_cast<size_t>(nranks - 1)};  // pairwise
}

// Block j of rank r's Send buffer is patternBlock(r, j): it must land as block r of rank j's output.
void checkAlltoAll(Algo algo, int nranks, size_t count, slimecclDataType_t type) {
  const size_t blockBytes = count * typeSize(type);
  const ScheduleRequest request = algotest::makeRequest(Coll::AlltoAll, algo, nranks, count, typeSize(type));
  std::vector<RankBuffers> buffers(nranks);
  for (int r = 0; r < nranks; ++r) {
    for (int to = 0; to < nranks; ++to) {
      const std::vector<char> block = algotest::patternBlock(r, to, blockBytes);
      buffers[r].send.insert(buffers[r].send.end(), block.begin(), block.end());
    }
    buffers[r].recv.assign(nranks * blockBytes, algotest::kUnwritten);
  }
  SimulationResult result;
  const std::string error = algotest::buildCheckAndSimulate(request, buffers, &result);
  ASSERT_EQ(error, "") << algotest::describeRequest(request);
  const Traffic traffic = expectedTraffic(algo, nranks, blockBytes);
  for (int r = 0; r < nranks; ++r) {
    std::vector<char> expected;
    for (int from = 0; from < nranks; ++from) {
      const std::vector<char> block = algotest::patternBlock(from, r, blockBytes);
      expected.insert(expected.end(), block.begin(), block.end());
    }
    ASSERT_EQ(algotest::firstDifference(expected, buffers[r].recv, blockBytes), "")
        << algotest::describeRequest(request) << ": output of rank " << r;
    ASSERT_EQ(result.bytesSent[r], traffic.bytesSent)
        << algotest::describeRequest(request) << ": bytes sent by rank " << r;
    ASSERT_EQ(result.rounds[r], traffic.sends) << algotest::describeRequest(request) << ": messages sent by rank " << r;
  }
}

class AlltoAllAlgorithm : public testing::TestWithParam<Algo> {};

TEST_P(AlltoAllAlgorithm, CorrectForEveryRankCountUpTo64) {
  for (int n : algotest::ranksUpTo64()) {
    checkAlltoAll(GetParam(), n, 1, slimecclInt8);
    checkAlltoAll(GetParam(), n, 3, slimecclFloat32);
  }
}

// Both algorithms have a number of steps that grows with the rank count (Bruck's in local copies).
TEST_P(AlltoAllAlgorithm, CorrectForLargeRankCounts) {
  for (int n : algotest::largeRankCounts(1024))
    checkAlltoAll(GetParam(), n, n % 3 == 0 ? 1u : 2u, n % 2 == 0 ? slimecclInt8 : slimecclFloat32);
}

TEST_P(AlltoAllAlgorithm, CountZeroNeedsNoSteps) {
  ScheduleRequest request = algotest::makeRequest(Coll::AlltoAll, GetParam(), 4, 0, 4);
  request.rank = 1;
  EXPECT_TRUE(buildCollective(request).steps.empty());
}

INSTANTIATE_TEST_SUITE_P(Every, AlltoAllAlgorithm, testing::ValuesIn(algorithmsFor(Coll::AlltoAll)),
                         [](const testing::TestParamInfo<Algo>& info) { return std::string(algoName(info.param)); });

TEST(AlltoAllPairwise, StepIExchangesWithRankPlusAndMinusI) {
  ScheduleRequest request = algotest::makeRequest(Coll::AlltoAll, Algo::Pairwise, 5, 1, 4);
  request.rank = 3;
  std::vector<int> sendPeers, recvPeers;
  for (const Step& step : buildCollective(request).steps) {
    if (step.kind == StepKind::Send) sendPeers.push_back(step.peer);
    if (step.kind == StepKind::Recv) recvPeers.push_back(step.peer);
  }
  EXPECT_EQ(sendPeers, (std::vector<int>{4, 0, 1, 2}));
  EXPECT_EQ(recvPeers, (std::vector<int>{2, 1, 0, 4}));
}

TEST(AlltoAllBruck, SendsOnePackedMessagePerRound) {
  ScheduleRequest request = algotest::makeRequest(Coll::AlltoAll, Algo::Bruck, 6, 1, 4);
  request.rank = 2;
  std::vector<int> peers;
  std::vector<size_t> bytes;
  for (const Step& step : buildCollective(request).steps)
    if (step.kind == StepKind::Send) {
      peers.push_back(step.peer);
      bytes.push_back(step.src.bytes);
      EXPECT_EQ(step.src.buffer, BufferId::Scratch);
    }
  // Distances with bit 0 set below 6: 1, 3, 5; bit 1: 2, 3; bit 2: 4, 5.
  EXPECT_EQ(peers, (std::vector<int>{3, 4, 0}));
  EXPECT_EQ(bytes, (std::vector<size_t>{12, 8, 8}));
}

}  // namespace
}  // namespace slimeccl
