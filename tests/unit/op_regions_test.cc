// The bytes each op reads and writes on a rank: what device staging copies in and out, and what
// in-place checks and send snapshots compare.
#include <gtest/gtest.h>

#include <vector>

#include "src/comm.h"
#include "src/op.h"

namespace slimeccl {
namespace {

constexpr int kRanks = 4, kRank = 2;
constexpr size_t kCount = 10, kBytes = kCount * 4;  // int32

class OpRegions : public ::testing::Test {
 protected:
  OpRegions() {
    comm_.rank = kRank;
    comm_.nranks = kRanks;
  }
  OpRecord op(Coll coll, int root = -1) {
    return OpRecord{coll, &comm_, send_.data(), recv_.data(), kCount, slimecclInt32, slimecclSum, root, -1, 0, nullptr};
  }
  void expect(Region region, const char* data, size_t bytes, const char* what) {
    EXPECT_EQ(region.data, data) << what;
    EXPECT_EQ(region.bytes, bytes) << what;
  }

  slimecclComm comm_;
  std::vector<char> send_ = std::vector<char>(kBytes * kRanks), recv_ = std::vector<char>(kBytes * kRanks);
};

TEST_F(OpRegions, PointToPoint) {
  expect(readRegion(op(Coll::Send)), send_.data(), kBytes, "Send reads");
  EXPECT_EQ(writtenRegion(op(Coll::Send)).bytes, 0u);
  EXPECT_EQ(readRegion(op(Coll::Recv)).bytes, 0u);
  expect(writtenRegion(op(Coll::Recv)), recv_.data(), kBytes, "Recv writes");
}

TEST_F(OpRegions, CollectivesThatGatherOrScatterSpanEveryRanksBlock) {
  expect(readRegion(op(Coll::AllGather)), send_.data(), kBytes, "AllGather reads its block");
  expect(writtenRegion(op(Coll::AllGather)), recv_.data(), kBytes * kRanks, "AllGather writes every block");
  expect(readRegion(op(Coll::ReduceScatter)), send_.data(), kBytes * kRanks, "ReduceScatter reads every block");
  expect(writtenRegion(op(Coll::ReduceScatter)), recv_.data(), kBytes, "ReduceScatter writes its block");
  expect(readRegion(op(Coll::AlltoAll)), send_.data(), kBytes * kRanks, "AlltoAll reads");
  expect(writtenRegion(op(Coll::AlltoAll)), recv_.data(), kBytes * kRanks, "AlltoAll writes");
  expect(readRegion(op(Coll::AllReduce)), send_.data(), kBytes, "AllReduce reads");
  expect(writtenRegion(op(Coll::AllReduce)), recv_.data(), kBytes, "AllReduce writes");
}

TEST_F(OpRegions, RootedCollectivesReadOrWriteOnlyWhereTheRootSaysSo) {
  expect(readRegion(op(Coll::Broadcast, kRank)), send_.data(), kBytes, "the root's Broadcast reads");
  EXPECT_EQ(readRegion(op(Coll::Broadcast, 0)).bytes, 0u) << "elsewhere Broadcast reads nothing";
  expect(writtenRegion(op(Coll::Broadcast, 0)), recv_.data(), kBytes, "every rank's Broadcast writes");
  expect(readRegion(op(Coll::Reduce, 0)), send_.data(), kBytes, "every rank's Reduce reads");
  expect(writtenRegion(op(Coll::Reduce, kRank)), recv_.data(), kBytes, "the root's Reduce writes");
  EXPECT_EQ(writtenRegion(op(Coll::Reduce, 0)).bytes, 0u) << "elsewhere Reduce writes nothing";
}

}  // namespace
}  // namespace slimeccl
