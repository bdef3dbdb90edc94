// Every AllGather algorithm, simulated at every rank count to 64 and at selected ones to 1024:
// every byte of every rank's output, the bytes and messages each rank sends (docs/algorithms.md),
// and the schedule rules (algo_test_support_a.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "src/op.h"
#include "tests/algorithms/algo_test_support_a.h"

namespace slimeccl {
namespace {

using algotest::Traffic;

struct AllGatherCase {
  Algo algo;
  int nranks;
  size_t count;
  slimecclDataType_t type;
  bool inPlace;
  const TopologySummary* topology = nullptr;
};

int ceilLog2(int n) {
  int bits = 0;
  while ((1 << bits) < n) ++bits;
  return bits;
}

bool multiHost(const TopologySummary* topology) { return topology != nullptr && !topology->singleHost(); }

// Hierarchical: a rank that is not its host's leader sends its block once; a leader sends every
// superblock but its next leader's around the ring, then the whole result to each rank of its host.
Traffic hierarchicalTraffic(const std::vector<int>& hostOf, int rank, size_t blockBytes) {
  const int n = static_cast<int>(hostOf.size());
  auto leaderOf = [&](int r) {
    for (int first = 0;; ++first)
      if (hostOf[first] == hostOf[r]) return first;
  };
  if (leaderOf(rank) != rank) return {blockBytes, 1};
  std::vector<int> leaders;
  for (int r = 0; r < n; ++r)
    if (leaderOf(r) == r) leaders.push_back(r);
  const size_t hosts = leaders.size();
  const size_t index = std::find(leaders.begin(), leaders.end(), rank) - leaders.begin();
  const int nextHost = hostOf[leaders[(index + 1) % hosts]];
  size_t hostSize = 0, nextHostSize = 0;
  for (int r = 0; r < n; ++r) {
    hostSize += hostOf[r] == hostOf[rank];
    nextHostSize += hostOf[r] == nextHost;
  }
  return {(n - nextHostSize) * blockBytes + (hostSize - 1) * n * blockBytes, (hosts - 1) + (hostSize - 1)};
}

Traffic expectedTraffic(const AllGatherCase& c, int rank) {
  const size_t blockBytes = c.count * typeSize(c.type);
  const size_t others = static_cast<size_t>(c.nranks - 1);
  if (c.algo == Algo::Hierarchical && multiHost(c.topology))
    return hierarchicalTraffic(c.topology->hostOf, rank, blockBytes);
  // Halving-doubling moves as much as the ring, in ceil(log2 N) messages.
  if (c.algo == Algo::HalvingDoubling) return {others * blockBytes, static_cast<size_t>(ceilLog2(c.nranks))};
  return {others * blockBytes, others};  // ring, direct, hierarchical on one host
}

void checkAllGather(const AllGatherCase& c) {
  const size_t blockBytes = c.count * typeSize(c.type);
  const size_t n = static_cast<size_t>(c.nranks);
  ScheduleRequest request = algotest::makeRequest(Coll::AllGather, c.algo, c.nranks, c.count, typeSize(c.type));
  request.inPlace = c.inPlace;
  request.topology = c.topology;
  std::vector<char> expected;
  std::vector<RankBuffers> buffers(n);
  for (size_t r = 0; r < n; ++r) {
    const std::vector<char> own = algotest::patternBlock(static_cast<int>(r), 0, blockBytes);
    expected.insert(expected.end(), own.begin(), own.end());
    buffers[r].recv.assign(n * blockBytes, algotest::kUnwritten);
    // In place the rank's block is already at its place in the output, and there is no Send buffer.
    if (c.inPlace)
      std::copy(own.begin(), own.end(), buffers[r].recv.begin() + static_cast<std::ptrdiff_t>(r * blockBytes));
    else
      buffers[r].send = own;
  }
  SimulationResult result;
  const std::string error = algotest::buildCheckAndSimulate(request, buffers, &result);
  ASSERT_EQ(error, "") << algotest::describeRequest(request);
  for (size_t r = 0; r < n; ++r) {
    ASSERT_EQ(algotest::firstDifference(expected, buffers[r].recv, blockBytes), "")
        << algotest::describeRequest(request) << ": output of rank " << r;
    const Traffic traffic = expectedTraffic(c, static_cast<int>(r));
    ASSERT_EQ(result.bytesSent[r], traffic.bytesSent)
        << algotest::describeRequest(request) << ": bytes sent by rank " << r;
    ASSERT_EQ(result.rounds[r], traffic.sends) << algotest::describeRequest(request) << ": messages sent by rank " << r;
  }
}

class AllGatherAlgorithm : public testing::TestWithParam<Algo> {};

TEST_P(AllGatherAlgorithm, CorrectForEveryRankCountUpTo64) {
  for (int n : algotest::ranksUpTo64())
    for (bool inPlace : {false, true}) {
      checkAllGather({GetParam(), n, 1, slimecclInt8, inPlace});
      checkAllGather({GetParam(), n, 3, slimecclFloat32, inPlace});
    }
}

TEST_P(AllGatherAlgorithm, CorrectForLargeRankCounts) {
  for (int n : algotest::largeRankCounts(1024))
    checkAllGather({GetParam(), n, n % 3 == 0 ? 1u : 2u, n % 2 == 0 ? slimecclInt8 : slimecclFloat32, n % 4 < 2});
}

INSTANTIATE_TEST_SUITE_P(Every, AllGatherAlgorithm, testing::ValuesIn(algorithmsFor(Coll::AllGather)),
                         [](const testing::TestParamInfo<Algo>& info) { return std::string(algoName(info.param)); });

struct HostLayout {
  const char* name;
  std::function<int(int rank, int nranks)> hostOf;
  bool fewHosts;  // a handful of hosts, several ranks on each: quick to simulate at any rank count
};

const std::vector<HostLayout>& hostLayouts() {
  static const std::vector<HostLayout> layouts = {
      {"one host", [](int, int) { return 0; }, false},
      {"two hosts, contiguous halves", [](int r, int n) { return r < (n + 1) / 2 ? 0 : 1; }, true},
      {"three uneven contiguous hosts", [](int r, int n) { return r < n / 2           ? 0
                                                                  : r < n / 2 + n / 3 ? 1
                                                                                      : 2; }, true},
      {"one rank per host", [](int r, int) { return r; }, false},
      {"three hosts, ranks dealt round robin", [](int r, int) { return r % 3; }, true},
      {"five scattered hosts, ids not in rank order", [](int r, int) { return 40 - (r * 7 + r / 3) % 5; }, true},
  };
  return layouts;
}

TopologySummary topologyOf(const HostLayout& layout, int nranks) {
  TopologySummary topology;
  for (int r = 0; r < nranks; ++r) topology.hostOf.push_back(layout.hostOf(r, nranks));
  return topology;
}

TEST(AllGatherHierarchical, CorrectForEveryHostLayoutUpTo64Ranks) {
  for (const HostLayout& layout : hostLayouts())
    for (int n : algotest::ranksUpTo64()) {
      SCOPED_TRACE(layout.name);
      const TopologySummary topology = topologyOf(layout, n);
      for (bool inPlace : {false, true}) {
        checkAllGather({Algo::Hierarchical, n, 1, slimecclInt8, inPlace, &topology});
        checkAllGather({Algo::Hierarchical, n, 3, slimecclFloat32, inPlace, &topology});
      }
    }
}

// With a handful of hosts the ring between leaders is short, and the simulation quick at any rank
// count; one host (the plain ring) and one rank per host have a ring step per rank.
TEST(AllGatherHierarchical, CorrectForEveryHostLayoutAtLargeRankCounts) {
  for (const HostLayout& layout : hostLayouts())
    for (int n : algotest::largeRankCounts(1024)) {
      SCOPED_TRACE(layout.name);
      const TopologySummary topology = topologyOf(layout, n);
      checkAllGather({Algo::Hierarchical, n, 1, slimecclInt8, n % 2 == 0, &topology});
    }
}

TEST(AllGatherHierarchical, IsTheRingOnOneHost) {
  const TopologySummary oneHost{{3, 3, 3, 3, 3}};
  for (const TopologySummary* topology : {static_cast<const TopologySummary*>(nullptr), &oneHost})
    for (int rank = 0; rank < 5; ++rank) {
      ScheduleRequest request = algotest::makeRequest(Coll::AllGather, Algo::Hierarchical, 5, 2, 4);
      request.rank = rank;
      request.topology = topology;
      const Schedule hierarchical = buildCollective(request);
      request.algo = Algo::Ring;
      EXPECT_EQ(describeSchedule(hierarchical), describeSchedule(buildCollective(request)));
    }
}

TEST(AllGatherHalvingDoubling, PowersOfTwoExchangeWithRankXorDistance) {
  ScheduleRequest request = algotest::makeRequest(Coll::AllGather, Algo::HalvingDoubling, 16, 1, 4);
  request.rank = 5;
  std::vector<int> peers;
  for (const Step& step : buildCollective(request).steps)
    if (step.kind == StepKind::Send) peers.push_back(step.peer);
  EXPECT_EQ(peers, (std::vector<int>{5 ^ 1, 5 ^ 2, 5 ^ 4, 5 ^ 8}));
}

TEST(AllGatherHalvingDoubling, OtherRankCountsSendToRankMinusDistance) {
  ScheduleRequest request = algotest::makeRequest(Coll::AllGather, Algo::HalvingDoubling, 6, 1, 4);
  request.rank = 1;
  std::vector<int> sendPeers, recvPeers;
  for (const Step& step : buildCollective(request).steps) {
    if (step.kind == StepKind::Send) sendPeers.push_back(step.peer);
    if (step.kind == StepKind::Recv) recvPeers.push_back(step.peer);
  }
  EXPECT_EQ(sendPeers, (std::vector<int>{0, 5, 3}));
  EXPECT_EQ(recvPeers, (std::vector<int>{2, 3, 5}));
}

TEST(AllGatherAlgorithms, CountZeroNeedsNoSteps) {
  const TopologySummary twoHosts{{0, 0, 1, 1}};
  for (Algo algo : {Algo::HalvingDoubling, Algo::Direct, Algo::Hierarchical}) {
    ScheduleRequest request = algotest::makeRequest(Coll::AllGather, algo, 4, 0, 4);
    request.rank = 2;
    request.topology = &twoHosts;
    EXPECT_TRUE(buildCollective(request).steps.empty()) << algoName(algo);
  }
}

// The checks of algo_test_support_a.h that the simulator cannot make, shown to catch what they
// are for on small hand-written schedules.
Step send(int peer, size_t offset, size_t bytes, int after = -1) {
  return Step{StepKind::Send, peer, BufferRange{BufferId::Recv, offset, bytes}, {}, after};
}
Step recv(int peer, size_t offset, size_t bytes, int after = -1) {
  return Step{StepKind::Recv, peer, {}, BufferRange{BufferId::Recv, offset, bytes}, after};
}

std::string violationOf(const std::vector<Schedule>& schedules) {
  const int n = static_cast<int>(schedules.size());
  return algotest::findRuleViolation(schedules, std::vector<RankBuffers>(n), algotest::ranksToCheckOrder(n, 0));
}

TEST(ScheduleRuleChecks, CatchAReceiveOverwritingWhatASendReads) {
  std::vector<Schedule> schedules(2);
  schedules[0].steps = {send(1, 0, 4), recv(1, 0, 4)};
  schedules[1].steps = {send(0, 0, 4), recv(0, 4, 4)};
  EXPECT_NE(violationOf(schedules).find("no dependency orders them"), std::string::npos);
  schedules[0].steps[1].dependsOn = 0;
  EXPECT_EQ(violationOf(schedules), "");
}

TEST(ScheduleRuleChecks, CatchAForwardThatRunsAheadOfItsReceiveChunkByChunk) {
  // Chunk 0 of a send of bytes 2..7 would wait only for chunk 0 of the receive of bytes 0..7.
  std::vector<Schedule> schedules(2);
  schedules[0].steps = {recv(1, 0, 8), send(1, 2, 6, 0)};
  schedules[1].steps = {send(0, 0, 8), recv(0, 8, 6)};
  EXPECT_NE(violationOf(schedules).find("no dependency orders them"), std::string::npos);
  schedules[0].steps[1] = send(1, 0, 6, 0);
  EXPECT_EQ(violationOf(schedules), "");
}

TEST(ScheduleRuleChecks, CatchSendsToOnePeerThatCanBecomeReadyOutOfOrder) {
  std::vector<Schedule> schedules(3);
  schedules[0].steps = {recv(2, 0, 4), send(1, 0, 4, 0), send(1, 4, 4)};
  schedules[1].steps = {recv(0, 0, 4), recv(0, 4, 4)};
  schedules[2].steps = {send(0, 0, 4)};
  EXPECT_NE(violationOf(schedules).find("can be ready before"), std::string::npos);
  schedules[0].steps[2].dependsOn = 0;
  EXPECT_EQ(violationOf(schedules), "");
}

TEST(ScheduleRuleChecks, CatchEmptyTransfersUnmatchedMessagesAndAMissingSendBuffer) {
  std::vector<Schedule> schedules(2);
  schedules[0].steps = {send(1, 0, 0)};
  schedules[1].steps = {recv(0, 0, 0)};
  EXPECT_NE(violationOf(schedules).find("zero bytes"), std::string::npos);
  schedules[0].steps = {send(1, 0, 4)};
  schedules[1].steps = {recv(0, 0, 2)};
  EXPECT_NE(violationOf(schedules).find("receives 2"), std::string::npos);
  schedules[0].steps = {Step{StepKind::Send, 1, BufferRange{BufferId::Send, 0, 4}, {}}};
  schedules[1].steps = {recv(0, 0, 4)};
  EXPECT_NE(violationOf(schedules).find("no Send buffer"), std::string::npos);
}

}  // namespace
}  // namespace slimeccl
