// Broadcast's scatters on the GPU path (algorithms/gpu_broadcast.h): the relay's pieces of every
// round and holder, and scatter_pull's shares, cover the buffer exactly once whatever its size, type
// and the rank count; the rounds grow with the size up to their bound; the names parse back.
#include <gtest/gtest.h>

#include "algorithms/gpu_broadcast.h"

namespace slimeccl {
namespace {

TEST(GpuBroadcastRelay, PiecesCoverTheBufferOnce) {
  for (int nranks : {3, 4, 8})
    for (size_t bytes :
         {size_t{1}, size_t{4095}, size_t{4097}, size_t{1} << 20, (size_t{33} << 20) + 7, size_t{1} << 30}) {
      const int rounds = relayRounds(bytes, nranks);
      size_t total = 0, next = 0;
      for (int round = 0; round < rounds; ++round)
        for (int holder = 0; holder < nranks - 1; ++holder) {
          const RelayPiece piece = relayPiece(bytes, nranks, rounds, round, holder);
          if (piece.bytes == 0) continue;
          EXPECT_EQ(piece.offset, next) << bytes << " bytes, " << nranks << " ranks";
          next = piece.offset + piece.bytes;
          total += piece.bytes;
        }
      EXPECT_EQ(total, bytes) << bytes << " bytes, " << nranks << " ranks";
      EXPECT_EQ(next, bytes);
    }
}

TEST(GpuBroadcastRelay, RoundsGrowWithTheSizeUpToTheBound) {
  EXPECT_EQ(relayRounds(1 << 20, 4), 1);
  EXPECT_EQ(relayRounds(size_t{48} << 20, 4), 2);
  EXPECT_EQ(relayRounds(size_t{1} << 30, 4), kRelayMaxRounds);
  EXPECT_EQ(relayRounds(size_t{1} << 30, 8), kRelayMaxRounds);
}

TEST(GpuBroadcastPull, SharesCoverTheBufferOnceIn4KiBMultiples) {
  for (int nranks : {3, 4, 8})
    for (size_t typeBytes : {size_t{1}, size_t{2}, size_t{4}, size_t{8}})
      for (size_t count : {size_t{1}, size_t{7}, size_t{1025}, (size_t{33} << 20) + 7}) {
        size_t next = 0;
        for (int holder = 0; holder < nranks - 1; ++holder) {
          const PullShare share = pullShare(count, typeBytes, nranks, holder);
          if (share.count == 0) continue;
          EXPECT_EQ(share.offset, next) << count << " x " << typeBytes << ", " << nranks << " ranks";
          EXPECT_EQ(share.offset * typeBytes % 4096, 0u);
          next = share.offset + share.count;
        }
        EXPECT_EQ(next, count) << count << " x " << typeBytes << ", " << nranks << " ranks";
      }
}

TEST(GpuBroadcastAlgos, NamesParseBackAndScattersNeedThreeRanks) {
  for (GpuBroadcastAlgo algo : kGpuBroadcastAlgos) {
    GpuBroadcastAlgo parsed;
    ASSERT_TRUE(parseGpuBroadcastAlgo(gpuBroadcastAlgoName(algo), &parsed));
    EXPECT_EQ(parsed, algo);
    EXPECT_TRUE(gpuBroadcastAlgoFits(algo, 3));
  }
  GpuBroadcastAlgo parsed;
  EXPECT_FALSE(parseGpuBroadcastAlgo("ring", &parsed));
  EXPECT_TRUE(gpuBroadcastAlgoFits(GpuBroadcastAlgo::Root, 2));
  EXPECT_FALSE(gpuBroadcastAlgoFits(GpuBroadcastAlgo::Relay, 2));
  EXPECT_FALSE(gpuBroadcastAlgoFits(GpuBroadcastAlgo::Pull, 2));
}

}  // namespace
}  // namespace slimeccl
