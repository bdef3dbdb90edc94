// The GPU path's measured choices (algorithms/gpu_tuning.h): each op's copy-kernel boundary, each
// reduction's algorithm and block count, by GPU count and size, as docs/performance.md reports them; every
// row is reachable (none hidden behind an earlier one).
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>

#include "algorithms/gpu_tuning.h"

namespace slimeccl {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(GpuTuning, CopyKernelBoundariesByOpAndGpuCount) {
  for (int n : {2, 4, 8}) {
    EXPECT_EQ(copyKernelMaxBytes(Coll::AllGather, n), 64 * kMiB) << n;
    EXPECT_EQ(copyKernelMaxBytes(Coll::AlltoAll, n), 64 * kMiB) << n;
    EXPECT_EQ(copyKernelMaxBytes(Coll::Send, n), 16 * kMiB) << n;
    EXPECT_EQ(copyKernelMaxBytes(Coll::Recv, n), 16 * kMiB) << n;
  }
  EXPECT_EQ(copyKernelMaxBytes(Coll::Broadcast, 2), 32 * kMiB);
  EXPECT_EQ(copyKernelMaxBytes(Coll::Broadcast, 3), 8 * kMiB);
  EXPECT_EQ(copyKernelMaxBytes(Coll::Broadcast, 8), 8 * kMiB);
}

TEST(GpuTuning, ReductionBlocksBySizeAndGpuCount) {
  for (Coll coll : {Coll::AllReduce, Coll::Reduce}) {
    EXPECT_EQ(reductionBlocks(coll, 1 << 30, 2), 64);
    EXPECT_EQ(reductionBlocks(coll, 8 * kMiB - 1, 4), 64);
    EXPECT_EQ(reductionBlocks(coll, 8 * kMiB, 4), 16);
    EXPECT_EQ(reductionBlocks(coll, size_t{1} << 30, 8), 16);
  }
  EXPECT_EQ(reductionBlocks(Coll::ReduceScatter, 64 * kMiB, 2), 64);
  EXPECT_EQ(reductionBlocks(Coll::ReduceScatter, 64 * kMiB, 4), 32);
  EXPECT_EQ(reductionBlocks(Coll::ReduceScatter, 1024, 3), 32);
  EXPECT_EQ(reductionBlocks(Coll::Broadcast, 8 * kMiB - 1, 4), 16);
  EXPECT_EQ(reductionBlocks(Coll::Broadcast, 8 * kMiB, 4), 8);
}

TEST(GpuTuning, BroadcastAlgorithmsByGpuCount) {
  EXPECT_EQ(tuneGpuBroadcast(1 << 30, 2), GpuBroadcastAlgo::Root);
  for (int n : {3, 4, 8})
    for (size_t bytes : {size_t{4}, size_t{1} << 20, size_t{1} << 30})
      EXPECT_EQ(tuneGpuBroadcast(bytes, n), GpuBroadcastAlgo::Pull);
}

TEST(GpuTuning, ReductionAlgorithmsBySizeGpuCountAndPlace) {
  EXPECT_EQ(tuneGpuReduction(Coll::AllReduce, 4096, 2, false), GpuReductionAlgo::OneShot);
  EXPECT_EQ(tuneGpuReduction(Coll::AllReduce, 4096, 2, true), GpuReductionAlgo::TwoShotSm);
  EXPECT_EQ(tuneGpuReduction(Coll::AllReduce, 512 << 10, 2, false), GpuReductionAlgo::OneShot);
  EXPECT_EQ(tuneGpuReduction(Coll::AllReduce, (512 << 10) + 16, 2, false), GpuReductionAlgo::TwoShotSm);
  EXPECT_EQ(tuneGpuReduction(Coll::AllReduce, 256 << 10, 4, false), GpuReductionAlgo::TwoShotSm);
  EXPECT_EQ(tuneGpuReduction(Coll::AllReduce, 256 * kMiB - 1, 2, false), GpuReductionAlgo::TwoShotSm);
  EXPECT_EQ(tuneGpuReduction(Coll::AllReduce, 256 * kMiB, 2, false), GpuReductionAlgo::TwoShot);
  EXPECT_EQ(tuneGpuReduction(Coll::AllReduce, 256 * kMiB, 2, true), GpuReductionAlgo::TwoShot);
  EXPECT_EQ(tuneGpuReduction(Coll::AllReduce, 1024 * kMiB, 4, false), GpuReductionAlgo::TwoShotSm);
  EXPECT_EQ(tuneGpuReduction(Coll::Reduce, 1024 * kMiB, 2, false), GpuReductionAlgo::TwoShotSm);
  EXPECT_EQ(tuneGpuReduction(Coll::Reduce, 4096, 2, true), GpuReductionAlgo::OneShot);
  EXPECT_EQ(tuneGpuReduction(Coll::ReduceScatter, 4096, 2, false), GpuReductionAlgo::Direct);
}

// Each row is the first match for its own corner, so the table has no dead rows and its ranges are
// well formed.
TEST(GpuTuning, EveryRowIsTheFirstMatchSomewhere) {
  for (const GpuChoiceRow& row : gpuChoiceTable()) {
    ASSERT_LE(row.minRanks, row.maxRanks);
    ASSERT_LT(row.minBytes, row.maxBytes);
    ASSERT_GT(row.value, 0u);
    if (row.choice == GpuChoice::CopyKernelBytes)
      EXPECT_EQ(copyKernelMaxBytes(row.coll, row.minRanks), row.value) << collName(row.coll);
    else if (row.choice == GpuChoice::LineBytes)
      EXPECT_EQ(lineMaxBytes(row.coll, row.minRanks), row.value) << collName(row.coll);
    else if (row.choice == GpuChoice::BroadcastAlgorithm)
      EXPECT_EQ(tuneGpuBroadcast(row.minBytes, row.minRanks), static_cast<GpuBroadcastAlgo>(row.value))
          << "from " << row.minBytes;
    else if (row.choice == GpuChoice::ReductionAlgorithm)
      EXPECT_EQ(tuneGpuReduction(row.coll, row.minBytes, row.minRanks, false), static_cast<GpuReductionAlgo>(row.value))
          << collName(row.coll) << " from " << row.minBytes;
    else
      EXPECT_EQ(reductionBlocks(row.coll, row.minBytes, row.minRanks), static_cast<int>(row.value))
          << collName(row.coll) << " from " << row.minBytes;
  }
}

}  // namespace
}  // namespace slimeccl
