// Broadcast's relay on the GPU path (algorithms/gpu_broadcast.h): the pieces of every round and
// holder cover the buffer exactly once, whatever its size and the rank count, and the rounds grow
// with the size up to their bound.
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

}  // namespace
}  // namespace slimeccl
