// A device AllGather's consumer (src/exec/block_consumer.h): handRest hands the blocks not handed
// yet, the own one first at its own address, then rank-1, rank-2, ... at their places in the
// receive buffer, and stops at the first error.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "src/exec/block_consumer.h"

namespace slimeccl {
namespace {

constexpr size_t kBlockBytes = 16;

class RecordingConsumer : public BlockConsumer {
 public:
  RecordingConsumer(int rank, int nranks, int failAt = -1) : BlockConsumer(rank, nranks), failAt_(failAt) {}
  std::vector<std::pair<int, const void*>> hands;

 protected:
  slimecclResult_t consume(int srcRank, const void* block, void*) override {
    hands.emplace_back(srcRank, block);
    return srcRank == failAt_ ? slimecclUnhandledDeviceError : slimecclSuccess;
  }

 private:
  int failAt_;
};

TEST(BlockConsumer, HandRestGivesTheOwnBlockFirstThenTheOthersFromRankMinusOne) {
  char recv[4 * kBlockBytes], own[kBlockBytes];
  RecordingConsumer consumer(1, 4);
  ASSERT_EQ(consumer.handRest(recv, own, kBlockBytes, nullptr), slimecclSuccess);
  const std::vector<std::pair<int, const void*>> expected{
      {1, own}, {0, recv}, {3, recv + 3 * kBlockBytes}, {2, recv + 2 * kBlockBytes}};
  EXPECT_EQ(consumer.hands, expected);
  EXPECT_EQ(consumer.handedCount(), 4u);
}

TEST(BlockConsumer, HandRestSkipsTheBlocksAlreadyHanded) {
  char recv[3 * kBlockBytes], own[kBlockBytes];
  RecordingConsumer consumer(0, 3);
  ASSERT_EQ(consumer.hand(0, own, nullptr), slimecclSuccess);
  ASSERT_EQ(consumer.hand(2, recv + 2 * kBlockBytes, nullptr), slimecclSuccess);
  consumer.hands.clear();
  ASSERT_EQ(consumer.handRest(recv, own, kBlockBytes, nullptr), slimecclSuccess);
  const std::vector<std::pair<int, const void*>> expected{{1, recv + kBlockBytes}};
  EXPECT_EQ(consumer.hands, expected);
  EXPECT_EQ(consumer.handedCount(), 3u);
}

TEST(BlockConsumer, HandRestStopsAtTheFirstError) {
  char recv[4 * kBlockBytes], own[kBlockBytes];
  RecordingConsumer consumer(2, 4, 1);
  EXPECT_EQ(consumer.handRest(recv, own, kBlockBytes, nullptr), slimecclUnhandledDeviceError);
  ASSERT_EQ(consumer.hands.size(), 2u);
  EXPECT_EQ(consumer.hands.back().first, 1);
  EXPECT_EQ(consumer.handedCount(), 2u);
}

}  // namespace
}  // namespace slimeccl
