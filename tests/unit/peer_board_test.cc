// The peer board of the GPU-to-GPU path (src/device/peer_board.h): two attachments with one key
// share posts, acknowledgements, failure words and flags; a post reads as published only under
// its own number; the two slots of a writer alternate, so the next post never covers the one
// before it; no region overlaps another.
#include "src/device/peer_board.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "src/base/util/secure.h"

namespace slimeccl {
namespace {

constexpr int kKinds = 4;

std::unique_ptr<PeerBoard> attachOrFail(const uint8_t* key, int nranks) {
  std::unique_ptr<PeerBoard> board;
  EXPECT_EQ(PeerBoard::attach(key, 16, nranks, kKinds, &board), slimecclSuccess);
  return board;
}

// Two attachments of one new board, as two ranks make them; its name is gone already.
struct TwoAttachments {
  std::unique_ptr<PeerBoard> first, second;
};
TwoAttachments attachTwice(int nranks) {
  uint8_t key[16];
  EXPECT_TRUE(randomBytes(key, sizeof(key)));
  TwoAttachments both{attachOrFail(key, nranks), attachOrFail(key, nranks)};
  if (both.first) both.first->unlinkName();
  return both;
}

TEST(PeerBoard, AttachmentsWithOneKeyShareEveryPostAndFlag) {
  auto [first, second] = attachTwice(3);
  ASSERT_TRUE(first && second);

  BoardPost* post = first->collPost(2, 5);
  EXPECT_FALSE(PeerBoard::published(second->collPost(2, 5), 5));
  post->contents.count = 1234;
  post->contents.onGpu = 1;
  post->contents.recv.offset = 64;
  PeerBoard::publish(post, 5);
  const BoardPost* seen = second->collPost(2, 5);
  ASSERT_TRUE(PeerBoard::published(seen, 5));
  EXPECT_FALSE(PeerBoard::published(seen, 3)) << "a post is read under its own number only";
  EXPECT_EQ(seen->contents.count, 1234u);
  EXPECT_EQ(seen->contents.onGpu, 1);
  EXPECT_EQ(seen->contents.recv.offset, 64u);
  // The next number goes to the other slot: post 5 stays readable.
  EXPECT_NE(first->collPost(2, 6), first->collPost(2, 5));
  EXPECT_EQ(first->collPost(2, 7), first->collPost(2, 5));

  // Sends and Recvs of every ordered pair have posts of their own, apart from the collectives'.
  BoardPost* send = first->p2pPost(0, 1, 2, 0);
  BoardPost* recv = first->p2pPost(1, 1, 2, 0);
  EXPECT_NE(send, recv);
  EXPECT_NE(first->p2pPost(0, 2, 1, 0), send);
  PeerBoard::publish(recv, 0);
  EXPECT_TRUE(PeerBoard::published(second->p2pPost(1, 1, 2, 0), 0));
  EXPECT_FALSE(PeerBoard::published(second->p2pPost(0, 1, 2, 0), 0));

  // Flags start cleared, are page-aligned, hold kinds x nranks words per rank, and are shared.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first->flags()) % 4096, 0u);
  EXPECT_GE(first->flagBytes(), 3 * kKinds * 3 * sizeof(uint32_t));
  for (size_t i = 0; i < 3 * kKinds * 3; ++i) EXPECT_EQ(second->flags()[i], 0u);
  first->flags()[7] = 1;
  EXPECT_EQ(second->flags()[7], 1u);
}

TEST(PeerBoard, PostsDoNotOverlap) {
  // Named apart rather than bound (auto [board, unused]): clang 14, which .ci/check_naming runs,
  // cannot capture a structured binding in the lambdas below.
  TwoAttachments both = attachTwice(4);
  std::unique_ptr<PeerBoard>& board = both.first;
  ASSERT_TRUE(board);
  // Every post of a 4-rank board, written in turn, keeps its own contents.
  uint64_t value = 1;
  auto each = [&](auto&& visit) {
    for (int r = 0; r < 4; ++r)
      for (uint64_t n = 0; n < 2; ++n) visit(board->collPost(r, n));
    for (int side = 0; side < 2; ++side)
      for (int from = 0; from < 4; ++from)
        for (int to = 0; to < 4; ++to)
          for (uint64_t n = 0; n < 2; ++n) visit(board->p2pPost(side, from, to, n));
  };
  each([&](BoardPost* p) { p->contents.count = value++; });
  value = 1;
  each([&](BoardPost* p) { EXPECT_EQ(p->contents.count, value++); });
  // The acknowledgements and failure words lie past the last post, the flags past them; writing
  // them all leaves every post as it was.
  EXPECT_GE(reinterpret_cast<char*>(board->p2pTaken(0, 0, 0)),
            reinterpret_cast<char*>(board->p2pPost(1, 3, 3, 1)) + sizeof(BoardPost));
  EXPECT_GE(reinterpret_cast<char*>(board->collTaken(0, 0)), reinterpret_cast<char*>(board->p2pTaken(1, 3, 3)) + 8);
  EXPECT_GE(reinterpret_cast<char*>(board->failed(0)), reinterpret_cast<char*>(board->collTaken(3, 3)) + 8);
  EXPECT_GE(reinterpret_cast<char*>(board->flags()), reinterpret_cast<char*>(board->failed(3)) + 4);
  for (int side = 0; side < 2; ++side)
    for (int from = 0; from < 4; ++from)
      for (int to = 0; to < 4; ++to) board->p2pTaken(side, from, to)->store(~0ull);
  for (int writer = 0; writer < 4; ++writer)
    for (int reader = 0; reader < 4; ++reader) board->collTaken(writer, reader)->store(~0ull);
  for (int r = 0; r < 4; ++r) board->failed(r)->store(~0u);
  value = 1;
  each([&](BoardPost* p) { EXPECT_EQ(p->contents.count, value++); });
  EXPECT_EQ(board->flags()[0], 0u);
}

TEST(PeerBoard, AcknowledgementsAndFailureWordsAreShared) {
  auto [first, second] = attachTwice(2);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->p2pTaken(1, 0, 1)->load(), 0u);
  EXPECT_EQ(second->failed(1)->load(), 0u);
  first->p2pTaken(1, 0, 1)->store(3);
  first->failed(1)->store(1);
  EXPECT_EQ(second->p2pTaken(1, 0, 1)->load(), 3u);
  EXPECT_EQ(second->p2pTaken(0, 0, 1)->load(), 0u) << "each side of a pair has its own";
  EXPECT_EQ(second->failed(1)->load(), 1u);
  EXPECT_EQ(second->failed(0)->load(), 0u);
  first->collTaken(0, 1)->store(5);
  EXPECT_EQ(second->collTaken(0, 1)->load(), 5u);
  EXPECT_EQ(second->collTaken(1, 0)->load(), 0u) << "each writer and reader have their own";
}

}  // namespace
}  // namespace slimeccl
