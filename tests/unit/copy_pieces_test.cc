// How a copy within one GPU is cut into pieces (src/device/copy_pieces.h).
#include "src/device/copy_pieces.h"

#include <gtest/gtest.h>

namespace slimeccl {
namespace {

// The pieces lie in order, back to back, cover [0, bytes) and none is larger than `most`.
void expectCover(size_t bytes, size_t most, size_t pieces) {
  const std::vector<CopyPiece> cut = copyPieces(bytes, most);
  ASSERT_EQ(cut.size(), pieces) << bytes << " bytes, at most " << most;
  size_t at = 0;
  for (const CopyPiece& p : cut) {
    EXPECT_EQ(p.offset, at);
    if (most != 0) {
      EXPECT_LE(p.bytes, most);
    }
    at += p.bytes;
  }
  EXPECT_EQ(at, bytes);
}

TEST(CopyPieces, CutsIntoPiecesOfAtMostTheBound) {
  const size_t mib = size_t{1} << 20;
  expectCover(64 * mib + 12, 64 * mib, 2);
  expectCover(64 * mib + 12, 16 * mib, 5);
  expectCover(128 * mib, 64 * mib, 2);
  expectCover(64 * mib, 64 * mib, 1);
  expectCover(1, 64 * mib, 1);
  expectCover(512 * mib, 64 * mib, 8);
}

TEST(CopyPieces, ZeroBoundKeepsTheCopyWhole) {
  expectCover(size_t{1} << 30, 0, 1);
  expectCover(7, 0, 1);
}

TEST(CopyPieces, AnEmptyCopyIsOneEmptyPiece) {
  expectCover(0, 64, 1);
  expectCover(0, 0, 1);
}

}  // namespace
}  // namespace slimeccl
