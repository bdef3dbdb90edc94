#include <gtest/gtest.h>

#include "algorithms/allgather_ring.h"
#include "src/base/error.h"
#include "src/exec/plan.h"

namespace slimeccl {
namespace {

constexpr size_t kP2PChunkBytesForTest = 1 << 20;

OpPlan ringPlan(int nranks, int rank, size_t blockBytes, size_t chunkBytes, std::vector<char>& send,
                std::vector<char>& recv) {
  send.assign(blockBytes, 0);
  recv.assign(blockBytes * nranks, 0);
  OpPlan plan;
  plan.op = OpRecord{Coll::AllGather, nullptr, send.data(), recv.data(), blockBytes, slimecclInt8,
                     slimecclSum,     -1,      -1,          3,           nullptr};
  plan.schedule = allgatherRing(nranks, rank, blockBytes, false);
  lowerSchedule(&plan, rank, nranks, chunkBytes);
  return plan;
}

TEST(Plan, OneSessionPerPeerAndDirection) {
  std::vector<char> send, recv;
  OpPlan plan = ringPlan(4, 1, 100, 4096, send, recv);
  ASSERT_EQ(plan.sessions.size(), 2u);
  EXPECT_TRUE(plan.sessions[0]->sending);
  EXPECT_EQ(plan.sessions[0]->peer, 2);
  EXPECT_FALSE(plan.sessions[1]->sending);
  EXPECT_EQ(plan.sessions[1]->peer, 0);
  EXPECT_EQ(plan.sessions[0]->bytesTotal, 300u);
  EXPECT_EQ(plan.locals.size(), 1u);
}

TEST(Plan, SmallFirstChunkTravelsInline) {
  std::vector<char> send, recv;
  OpPlan plan = ringPlan(3, 0, 100, 4096, send, recv);
  for (auto& s : plan.sessions) {
    ASSERT_NE(s->inlineChunk, nullptr);
    EXPECT_EQ(s->inlineChunk->bytes, 100u);
    // control, header, the first block (inside the header), then the second block
    ASSERT_EQ(s->ops.size(), 4u);
    EXPECT_TRUE(s->ops[2]->inlined);
    EXPECT_FALSE(s->ops[3]->inlined);
  }
}

TEST(Plan, LargeBlocksAreChunkedAndForwardedChunkByChunk) {
  std::vector<char> send, recv;
  const size_t chunk = 16384, block = 3 * chunk + 5;  // chunks too big to travel inline
  OpPlan plan = ringPlan(3, 2, block, chunk, send, recv);
  Session* sending = plan.sessions[0].get();
  ASSERT_TRUE(sending->sending);
  EXPECT_EQ(sending->inlineChunk, nullptr);
  // control + header + 4 chunks per block * 2 blocks
  ASSERT_EQ(sending->ops.size(), 2u + 8u);
  // The second block's chunks wait for the matching chunks of the first received block.
  for (size_t c = 0; c < 4; ++c) {
    NetOp* op = sending->ops[2 + 4 + c].get();
    ASSERT_NE(op->dependency, nullptr);
    EXPECT_EQ(op->needed, c + 1);
  }
  EXPECT_EQ(sending->ops[2]->dependency, nullptr);
}

TEST(Plan, MismatchNamesBothCalls) {
  std::vector<char> send, recv;
  OpPlan plan = ringPlan(2, 0, 100, 4096, send, recv);
  Session* s = plan.sessions[0].get();
  OpRecord theirs = plan.op;
  theirs.count = 200;
  fillDesc(theirs, 1, 200, &s->remote);
  EXPECT_EQ(checkPeerDesc(plan, *s), slimecclInvalidUsage);
  EXPECT_NE(threadError().find("rank 0 called AllGather(count=100"), std::string::npos) << threadError();
  EXPECT_NE(threadError().find("rank 1 called AllGather(count=200"), std::string::npos) << threadError();
}

TEST(Plan, P2PSizesMustMatch) {
  std::vector<char> buf(64);
  OpPlan plan;
  plan.op = OpRecord{Coll::Send, nullptr, buf.data(), nullptr, 64, slimecclInt8, slimecclSum, -1, 1, 0, nullptr};
  plan.schedule.steps.push_back(Step{StepKind::Send, 1, BufferRange{BufferId::Send, 0, 64}, {}});
  lowerSchedule(&plan, 0, 2, 4096);
  Session* s = plan.sessions[0].get();
  OpRecord recv{Coll::Recv, nullptr, nullptr, buf.data(), 32, slimecclInt8, slimecclSum, -1, 0, 0, nullptr};
  fillDesc(recv, 1, 32, &s->remote);
  EXPECT_EQ(checkPeerDesc(plan, *s), slimecclInvalidUsage);
  EXPECT_NE(threadError().find("64 bytes"), std::string::npos) << threadError();
  EXPECT_NE(threadError().find("32 bytes"), std::string::npos) << threadError();
  fillDesc(OpRecord{Coll::Recv, nullptr, nullptr, buf.data(), 64, slimecclInt8, slimecclSum, -1, 0, 0, nullptr}, 1, 64,
           &s->remote);
  EXPECT_EQ(checkPeerDesc(plan, *s), slimecclSuccess);
}

// A Send (or Recv) of `bytes` to (from) peer 1, lowered for rank 0 of 2.
OpPlan p2pPlan(Coll coll, std::vector<char>& buf, size_t bytes, size_t chunkBytes = kP2PChunkBytesForTest) {
  buf.assign(bytes, 0);
  OpPlan plan;
  bool sending = coll == Coll::Send;
  plan.op = OpRecord{coll,
                     nullptr,
                     sending ? buf.data() : nullptr,
                     sending ? nullptr : buf.data(),
                     bytes,
                     slimecclInt8,
                     slimecclSum,
                     -1,
                     1,
                     0,
                     nullptr};
  BufferRange range{sending ? BufferId::Send : BufferId::Recv, 0, bytes};
  plan.schedule.steps.push_back(sending ? Step{StepKind::Send, 1, range, {}} : Step{StepKind::Recv, 1, {}, range});
  lowerSchedule(&plan, 0, 2, chunkBytes);
  return plan;
}

TEST(Plan, SmallSendRecvIsOneEagerMessage) {
  for (Coll coll : {Coll::Send, Coll::Recv}) {
    std::vector<char> buf;
    OpPlan plan = p2pPlan(coll, buf, kInlineBytes);
    ASSERT_EQ(plan.sessions.size(), 1u);
    Session* s = plan.sessions[0].get();
    // No descriptor from the receiver: the header, and the data riding inside it.
    ASSERT_EQ(s->ops.size(), 2u);
    EXPECT_EQ(s->ops[0].get(), s->header);
    EXPECT_EQ(s->header->kind, coll == Coll::Send ? NetOpKind::HeaderSend : NetOpKind::HeaderRecv);
    EXPECT_TRUE(s->ops[1]->inlined);
    EXPECT_EQ(plan.remaining, 1u);
  }
}

// The sender of an eager message whole in its header writes the short descriptor (8 bytes); one
// whose chunks are smaller writes the whole descriptor before its first chunk.
TEST(Plan, AnEagerSendWholeInItsHeaderSendsTheShortDescriptor) {
  std::vector<char> buf;
  OpPlan whole = p2pPlan(Coll::Send, buf, 100);
  EXPECT_TRUE(whole.sessions[0]->shortHeader);
  EXPECT_EQ(whole.sessions[0]->header->bytes, 8u + 100u);
  OpPlan chunked = p2pPlan(Coll::Send, buf, 6000, 4096);
  EXPECT_FALSE(chunked.sessions[0]->shortHeader);
  EXPECT_EQ(chunked.sessions[0]->header->bytes, sizeof(OpDesc) + 4096u);
  // A receiver posts room for either form.
  OpPlan recv = p2pPlan(Coll::Recv, buf, 100);
  EXPECT_FALSE(recv.sessions[0]->shortHeader);
  EXPECT_EQ(recv.sessions[0]->header->bytes, sizeof(OpDesc) + kInlineBytes);
}

TEST(Plan, LargerSendRecvWaitsForTheReceiversDescriptor) {
  for (Coll coll : {Coll::Send, Coll::Recv}) {
    std::vector<char> buf;
    OpPlan plan = p2pPlan(coll, buf, kInlineBytes + 1);
    Session* s = plan.sessions[0].get();
    ASSERT_EQ(s->ops.size(), 3u);
    EXPECT_EQ(s->ops[0]->kind, coll == Coll::Send ? NetOpKind::CtsRecv : NetOpKind::CtsSend);
    EXPECT_EQ(s->ops[1].get(), s->header);
    EXPECT_FALSE(s->ops[2]->inlined);
  }
}

}  // namespace
}  // namespace slimeccl
