#include <gtest/gtest.h>

#include "algorithms/allgather_ring.h"
#include "algorithms/simulator.h"

namespace slimeccl {
namespace {

// Every rank's block is filled with bytes derived from (rank, index).
char patternByte(int rank, size_t i) { return static_cast<char>((rank * 131 + i * 7 + 3) & 0xff); }

void checkAllGather(int nranks, size_t blockBytes, bool inPlace) {
  std::vector<Schedule> schedules;
  std::vector<RankBuffers> buffers(nranks);
  for (int r = 0; r < nranks; ++r) {
    schedules.push_back(allgatherRing(nranks, r, blockBytes, inPlace));
    buffers[r].recv.assign(blockBytes * nranks, 0);
    std::vector<char>& src = inPlace ? buffers[r].recv : buffers[r].send;
    if (!inPlace) src.assign(blockBytes, 0);
    for (size_t i = 0; i < blockBytes; ++i) src[(inPlace ? r * blockBytes : 0) + i] = patternByte(r, i);
  }
  SimulationResult result = simulate(schedules, buffers);
  ASSERT_TRUE(result.ok) << "nranks " << nranks << ": " << result.error;
  for (int r = 0; r < nranks; ++r) {
    for (int b = 0; b < nranks; ++b)
      for (size_t i = 0; i < blockBytes; ++i)
        ASSERT_EQ(buffers[r].recv[b * blockBytes + i], patternByte(b, i))
            << "nranks " << nranks << " rank " << r << " block " << b << " byte " << i;
    // Each rank sends n-1 blocks: the ring's bandwidth-optimal volume.
    EXPECT_EQ(result.bytesSent[r], (nranks - 1) * blockBytes);
  }
}

TEST(RingAllGather, CorrectForEveryRankCountUpTo64) {
  for (int n = 1; n <= 64; ++n) {
    checkAllGather(n, 5, false);
    checkAllGather(n, 3, true);
  }
}

TEST(RingAllGather, CorrectForLargeRankCounts) {
  for (int n : {100, 127, 256, 1024}) checkAllGather(n, 2, n % 2 == 0);
}

TEST(RingAllGather, StepsFollowTheRing) {
  Schedule s = allgatherRing(4, 1, 8, false);
  // A copy of the own block, then (send to next, receive from previous) per step.
  ASSERT_EQ(s.steps.size(), 1u + 2 * 3);
  EXPECT_EQ(s.steps[0].kind, StepKind::Copy);
  for (int step = 0; step < 3; ++step) {
    const Step& send = s.steps[1 + 2 * step];
    const Step& recv = s.steps[2 + 2 * step];
    EXPECT_EQ(send.kind, StepKind::Send);
    EXPECT_EQ(send.peer, 2);
    EXPECT_EQ(recv.kind, StepKind::Recv);
    EXPECT_EQ(recv.peer, 0);
    EXPECT_EQ(recv.dst.offset, static_cast<size_t>(((1 - step - 1 + 4) % 4) * 8));
    EXPECT_EQ(send.dependsOn, step == 0 ? -1 : 2 * step);
  }
  EXPECT_EQ(s.steps[1].src.buffer, BufferId::Send);  // the first send reads the user's block
}

TEST(RingAllGather, SingleRankIsACopyOrNothing) {
  EXPECT_EQ(allgatherRing(1, 0, 8, false).steps.size(), 1u);
  EXPECT_TRUE(allgatherRing(1, 0, 8, true).steps.empty());
}

TEST(Simulator, ReportsDeadlock) {
  std::vector<Schedule> schedules(2);
  schedules[0].steps.push_back(Step{StepKind::Recv, 1, {}, BufferRange{BufferId::Recv, 0, 4}});
  schedules[1].steps.push_back(Step{StepKind::Recv, 0, {}, BufferRange{BufferId::Recv, 0, 4}});
  std::vector<RankBuffers> buffers(2);
  for (auto& b : buffers) b.recv.assign(4, 0);
  SimulationResult result = simulate(schedules, buffers);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("deadlock"), std::string::npos);
}

TEST(Simulator, ReportsSizeMismatch) {
  std::vector<Schedule> schedules(2);
  schedules[0].steps.push_back(Step{StepKind::Send, 1, BufferRange{BufferId::Send, 0, 8}, {}});
  schedules[1].steps.push_back(Step{StepKind::Recv, 0, {}, BufferRange{BufferId::Recv, 0, 4}});
  std::vector<RankBuffers> buffers(2);
  buffers[0].send.assign(8, 1);
  buffers[1].recv.assign(4, 0);
  EXPECT_FALSE(simulate(schedules, buffers).ok);
}

}  // namespace
}  // namespace slimeccl
