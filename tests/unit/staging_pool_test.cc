// The staging pool: released blocks serve later ops of a fitting size, on their own node only,
// and the pool keeps at most its limit of idle memory, dropping the oldest blocks first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "src/exec/staging_buffer.h"
#include "src/exec/staging_pool.h"

namespace slimeccl {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

StagingBlock take(StagingPool& pool, size_t bytes, int node = -1) {
  StagingBlock block;
  EXPECT_TRUE(pool.acquire(bytes, node, &block));
  EXPECT_NE(block.data, nullptr);
  EXPECT_GE(block.capacity, bytes);
  EXPECT_EQ(block.capacity % static_cast<size_t>(sysconf(_SC_PAGESIZE)), 0u);
  memset(block.data, 0x5a, bytes);  // the whole block is writable
  return block;
}

TEST(StagingPool, AReleasedBlockServesTheNextFittingRequest) {
  StagingPool pool(64 * kMiB);
  StagingBlock first = take(pool, 3 * kMiB);
  pool.release(first);
  EXPECT_EQ(pool.idleBlocks(), 1u);
  EXPECT_EQ(pool.idleBytes(), first.capacity);

  StagingBlock again = take(pool, 2 * kMiB);
  EXPECT_EQ(again.data, first.data) << "a block up to twice the size asked for is reused";
  EXPECT_EQ(pool.idleBytes(), 0u);
  pool.release(again);

  StagingBlock small = take(pool, kMiB);
  EXPECT_NE(small.data, first.data) << "a block more than twice the size is kept for larger ops";
  StagingBlock large = take(pool, 4 * kMiB);
  EXPECT_NE(large.data, first.data) << "a block too small is never handed out";
  pool.release(small);
  pool.release(large);
  EXPECT_EQ(pool.idleBlocks(), 3u);
}

TEST(StagingPool, TheSmallestFittingBlockIsChosen) {
  StagingPool pool(64 * kMiB);
  StagingBlock a = take(pool, 6 * kMiB), b = take(pool, 4 * kMiB), c = take(pool, 5 * kMiB);
  pool.release(a);
  pool.release(b);
  pool.release(c);
  StagingBlock got = take(pool, 4 * kMiB);
  EXPECT_EQ(got.data, b.data);
  got = take(pool, 4 * kMiB);
  EXPECT_EQ(got.data, c.data);
}

TEST(StagingPool, IdleMemoryStaysWithinTheLimitOldestDroppedFirst) {
  StagingPool pool(5 * kMiB);
  StagingBlock a = take(pool, 2 * kMiB), b = take(pool, 2 * kMiB), c = take(pool, 2 * kMiB);
  pool.release(a);
  pool.release(b);
  pool.release(c);
  EXPECT_EQ(pool.idleBlocks(), 2u);
  EXPECT_EQ(pool.idleBytes(), 4 * kMiB);
  // a, released first, is gone; b and c serve the next two requests.
  StagingBlock first = take(pool, 2 * kMiB), second = take(pool, 2 * kMiB);
  EXPECT_TRUE((first.data == b.data && second.data == c.data) || (first.data == c.data && second.data == b.data));
  pool.release(first);
  pool.release(second);

  StagingPool none(0);
  none.release(take(none, kMiB));
  EXPECT_EQ(none.idleBlocks(), 0u) << "a limit of 0 keeps nothing";
}

TEST(StagingPool, BlocksOfAnotherNodeAreNotHandedOut) {
  StagingPool pool(64 * kMiB);
  StagingBlock anywhere = take(pool, kMiB, -1);
  pool.release(anywhere);
  StagingBlock placed = take(pool, kMiB, 0);
  EXPECT_NE(placed.data, anywhere.data);
  pool.release(placed);
}

// StagingBuffer takes its memory from the process's pool from 64 KiB: a buffer made again after
// one of the same size is gone gets the same memory, with no new mapping to fault in.
TEST(StagingPool, StagingBuffersReuseThePoolsMemory) {
  const char* first = nullptr;
  {
    StagingBuffer buffer(8 * kMiB, -1);
    ASSERT_NE(buffer.data(), nullptr);
    memset(buffer.data(), 1, buffer.size());
    first = buffer.data();
  }
  StagingBuffer again(7 * kMiB, -1);
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(again.size(), 7 * kMiB);
  StagingBuffer small(100, -1);
  ASSERT_NE(small.data(), nullptr);
  small.data()[99] = 1;
  StagingBuffer moved = std::move(again);
  EXPECT_EQ(moved.data(), first);
  EXPECT_EQ(again.data(), nullptr);
}

}  // namespace
}  // namespace slimeccl
