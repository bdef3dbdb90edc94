// How a call or group is planned into rounds through a comm's chunk arena (src/exec/chunk_plan.h),
// on a plain arena as a rank without a GPU has: round c holds chunk c of every cut op, with its own
// sequence number; host rows of one stretch are used in place and rows of several are staged in
// bay c mod 3, inside the bay and apart from each other; copying the rows in, running the round's
// op and copying the results back gives the op's result; an op the arena does not serve runs whole
// in the first round; and a round whose areas outgrow a bay says so.
#include "src/exec/chunk_plan.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "src/comm.h"
#include "src/device/chunk_staging.h"

namespace slimeccl {
namespace {

constexpr int kRanks = 3, kRank = 1;
constexpr size_t kChunkBytes = 4096;

class ChunkPlanTest : public ::testing::Test {
 protected:
  ChunkPlanTest() {
    comm_.rank = kRank;
    comm_.nranks = kRanks;
    EXPECT_EQ(ChunkStaging::create(kRank, -1, kChunkBytes, &comm_.chunkStaging), slimecclSuccess);
  }

  OpRecord op(Coll coll, std::vector<float>& send, std::vector<float>& recv, size_t count, uint64_t seq) {
    return OpRecord{coll, &comm_, send.data(), recv.data(), count, slimecclFloat, slimecclSum, 0, 0, seq, nullptr};
  }

  bool inBay(const void* p, size_t bytes, int bay) const {
    const char* at = static_cast<const char*>(p);
    const char* first = comm_.chunkStaging->bay(bay);
    return at >= first && at + bytes <= first + comm_.chunkStaging->bayBytes();
  }

  slimecclComm comm_;
};

TEST_F(ChunkPlanTest, RoundsCutTheOpAndStageRowsOfSeveralStretchesInTheirBays) {
  // An AllGather of 3000 floats per rank: 12000 bytes per block, so each chunk takes a third of
  // the chunk's bytes from every block; the receive buffer's rows (one per block) are staged.
  const size_t count = 3000;
  std::vector<float> send(count), recv(count * kRanks, -1.0f);
  for (size_t i = 0; i < count; ++i) send[i] = static_cast<float>(i);
  std::vector<OpRecord> ops{op(Coll::AllGather, send, recv, count, 40)};
  ChunkPlan plan(ops);
  ASSERT_GT(plan.rounds(), 1u);
  size_t covered = 0;
  for (size_t c = 0; c < plan.rounds(); ++c) {
    ChunkRound round;
    plan.round(c, &round);
    ASSERT_EQ(round.ops.size(), 1u);
    ASSERT_FALSE(round.overflowed);
    const OpRecord& chunk = round.ops.front();
    EXPECT_EQ(chunk.seq, 40 + c) << "round " << c;
    EXPECT_EQ(round.chunksOf, std::vector<slimecclComm*>{&comm_});
    const int bay = ChunkPlan::bayOfRound(c);
    // The send buffer is one stretch of host memory: used where it is.
    EXPECT_EQ(chunk.sendbuff, send.data() + covered);
    EXPECT_TRUE(round.copiesIn.empty());
    ASSERT_EQ(round.copiesBack.size(), 1u);
    const RowsCopy& back = round.copiesBack.front();
    EXPECT_EQ(back.rows.rows, static_cast<size_t>(kRanks));
    EXPECT_EQ(back.gpu, -1);
    EXPECT_TRUE(inBay(back.staged, back.rows.bytes(), bay)) << "round " << c;
    EXPECT_EQ(chunk.recvbuff, back.staged);
    // Run the chunk's AllGather as every rank holding the same block would, then copy back.
    for (int r = 0; r < kRanks; ++r)
      memcpy(static_cast<char*>(chunk.recvbuff) + r * back.rows.width, chunk.sendbuff, back.rows.width);
    for (size_t row = 0; row < back.rows.rows; ++row)
      memcpy(reinterpret_cast<char*>(recv.data()) + back.rows.offset + row * back.rows.pitch,
             back.staged + row * back.rows.width, back.rows.width);
    covered += chunk.count;
  }
  EXPECT_EQ(covered, count);
  for (int r = 0; r < kRanks; ++r)
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(recv[r * count + i], static_cast<float>(i)) << r << " " << i;
}

TEST_F(ChunkPlanTest, AnOpTheArenaDoesNotServeRunsWholeInTheFirstRound) {
  const size_t large = 4 * kChunkBytes / sizeof(float), small = 16;
  std::vector<float> a(large), b(large), c(small), d(small);
  std::vector<OpRecord> ops{op(Coll::AllReduce, a, b, large, 7), op(Coll::AllReduce, c, d, small, 11)};
  ops[1].premul.on = true;  // a PreMulSum scalar: never cut
  ChunkPlan plan(ops);
  ASSERT_EQ(plan.rounds(), 4u);
  for (size_t r = 0; r < plan.rounds(); ++r) {
    ChunkRound round;
    plan.round(r, &round);
    const bool first = r == 0;
    ASSERT_EQ(round.ops.size(), first ? 2u : 1u) << "round " << r;
    EXPECT_EQ(round.chunksOf.size(), 1u);
    EXPECT_EQ(round.ops[0].seq, 7 + r);
    if (first) {
      EXPECT_EQ(round.ops[1].seq, 11u);
      EXPECT_EQ(round.ops[1].sendbuff, c.data());
      EXPECT_EQ(round.ops[1].count, small);
    }
  }
}

TEST_F(ChunkPlanTest, ARoundLargerThanItsBayIsMarked) {
  // Two AlltoAlls of several rows per buffer in one group: each stages a chunk's send and receive
  // rows, so one round needs two chunks' worth of each, more than a bay of two chunks.
  const size_t count = kChunkBytes;  // floats per block: every chunk is a full chunk
  std::vector<float> s1(count * kRanks), r1(count * kRanks), s2(count * kRanks), r2(count * kRanks);
  std::vector<OpRecord> ops{op(Coll::AlltoAll, s1, r1, count, 0), op(Coll::AlltoAll, s2, r2, count, 1)};
  ChunkPlan plan(ops);
  ChunkRound round;
  plan.round(0, &round);
  EXPECT_TRUE(round.overflowed);
  ASSERT_EQ(round.copiesIn.size(), 2u);
  // The first op's areas are in the bay; the second's, which did not fit, are not.
  EXPECT_TRUE(inBay(round.copiesIn[0].staged, round.copiesIn[0].rows.bytes(), 0));
  EXPECT_FALSE(inBay(round.copiesIn[1].staged, round.copiesIn[1].rows.bytes(), 0));
  ASSERT_EQ(plan.touched().size(), 1u);
  EXPECT_EQ(plan.touched().front().comm, &comm_);
}

}  // namespace
}  // namespace slimeccl
