// The plan cache: a repeated call gets its plan back rearmed, other calls get none, and the cache
// keeps a bounded number of plans of bounded memory.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "algorithms/allgather_ring.h"
#include "src/exec/plan_cache.h"

namespace slimeccl {
namespace {

constexpr int kRanks = 3, kRank = 1;

OpRecord gatherCall(std::vector<char>& send, std::vector<char>& recv, uint64_t seq) {
  return OpRecord{Coll::AllGather, nullptr, send.data(), recv.data(), send.size(), slimecclInt8,
                  slimecclSum,     -1,      -1,          seq,         nullptr};
}

std::unique_ptr<OpPlan> lowered(const OpRecord& op) {
  auto plan = std::make_unique<OpPlan>();
  plan->op = op;
  plan->schedule = allgatherRing(kRanks, kRank, op.count, false);
  lowerSchedule(plan.get(), kRank, kRanks, 4096);
  return plan;
}

struct Buffers {
  std::vector<char> send, recv;
  explicit Buffers(size_t block) : send(block), recv(block * kRanks) {}
};

TEST(PlanCache, ARepeatedCallGetsItsPlanRearmed) {
  PlanCache cache;
  Buffers b(100);
  std::unique_ptr<OpPlan> plan = lowered(gatherCall(b.send, b.recv, 4));
  // As a finished run leaves it: progress counted, a descriptor of the old call.
  plan->remaining = 0;
  plan->stepDone.assign(plan->stepDone.size(), 7);
  for (LocalTask& task : plan->locals) task.done = true;
  for (auto& s : plan->sessions) s->bytesDone = 100;
  OpPlan* kept = plan.get();
  cache.keep(std::move(plan));

  std::unique_ptr<OpPlan> again = cache.take(gatherCall(b.send, b.recv, 5), kRank);
  ASSERT_EQ(again.get(), kept);
  EXPECT_EQ(again->op.seq, 5u);
  EXPECT_EQ(again->remaining, again->total);
  EXPECT_GT(again->total, 0u);
  for (size_t done : again->stepDone) EXPECT_EQ(done, 0u);
  for (const LocalTask& task : again->locals) EXPECT_FALSE(task.done);
  for (auto& s : again->sessions) {
    EXPECT_EQ(s->local.seq, 5u);
    EXPECT_EQ(s->bytesDone.load(), 0u);
    EXPECT_FALSE(s->remoteSeen.load());
  }
  // Taken plans leave the cache: a second identical call in flight gets its own.
  EXPECT_EQ(cache.take(gatherCall(b.send, b.recv, 6), kRank), nullptr);
}

TEST(PlanCache, OtherBuffersCountsOrTypesGetNoPlan) {
  PlanCache cache;
  Buffers b(100), other(100);
  cache.keep(lowered(gatherCall(b.send, b.recv, 0)));
  EXPECT_EQ(cache.take(gatherCall(other.send, b.recv, 1), kRank), nullptr);
  EXPECT_EQ(cache.take(gatherCall(b.send, other.recv, 1), kRank), nullptr);
  OpRecord fewer = gatherCall(b.send, b.recv, 1);
  fewer.count = 50;
  EXPECT_EQ(cache.take(fewer, kRank), nullptr);
  OpRecord wider = gatherCall(b.send, b.recv, 1);
  wider.type = slimecclInt32;
  EXPECT_EQ(cache.take(wider, kRank), nullptr);
  EXPECT_NE(cache.take(gatherCall(b.send, b.recv, 1), kRank), nullptr);
}

TEST(PlanCache, TheLeastRecentlyUsedPlanGoesFirst) {
  PlanCache cache;
  std::vector<Buffers> calls;
  for (int i = 0; i < 17; ++i) calls.emplace_back(64);
  for (int i = 0; i < 17; ++i) cache.keep(lowered(gatherCall(calls[i].send, calls[i].recv, 0)));
  EXPECT_EQ(cache.take(gatherCall(calls[0].send, calls[0].recv, 1), kRank), nullptr);
  for (int i = 1; i < 17; ++i) EXPECT_NE(cache.take(gatherCall(calls[i].send, calls[i].recv, 1), kRank), nullptr) << i;
}

TEST(PlanCache, PlansHoldingMuchMemoryAreNotKept) {
  PlanCache cache;
  Buffers b(100);
  std::unique_ptr<OpPlan> plan = lowered(gatherCall(b.send, b.recv, 0));
  plan->scratch = StagingBuffer(2 << 20, -1);
  cache.keep(std::move(plan));
  EXPECT_EQ(cache.take(gatherCall(b.send, b.recv, 1), kRank), nullptr);
}

}  // namespace
}  // namespace slimeccl
