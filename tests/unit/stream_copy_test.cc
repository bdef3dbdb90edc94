// copyStreaming moves exactly the bytes asked for, at every alignment of both ends and every
// length around its 16-byte head and 64-byte body, and leaves the bytes around the target alone.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <vector>

#include "src/base/sys/stream_copy.h"
#include "src/base/sys/cache_size.h"

namespace slimeccl {
namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + seed);
  return v;
}

void expectCopied(size_t srcOffset, size_t dstOffset, size_t n) {
  constexpr size_t kGuard = 80;
  std::vector<uint8_t> src = pattern(srcOffset + n, 3);
  std::vector<uint8_t> dst(dstOffset + n + kGuard, 0xee);
  copyStreaming(dst.data() + dstOffset, src.data() + srcOffset, n);
  for (size_t i = 0; i < dstOffset; ++i) ASSERT_EQ(dst[i], 0xee) << "byte before the target, " << i;
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(dst[dstOffset + i], src[srcOffset + i])
        << "src +" << srcOffset << " dst +" << dstOffset << " n " << n << " byte " << i;
  for (size_t i = 0; i < kGuard; ++i) ASSERT_EQ(dst[dstOffset + n + i], 0xee) << "byte after the target, " << i;
}

TEST(StreamCopy, EveryAlignmentAndShortLength) {
  for (size_t srcOffset = 0; srcOffset < 17; ++srcOffset)
    for (size_t dstOffset = 0; dstOffset < 17; ++dstOffset)
      for (size_t n = 0; n < 200; ++n) expectCopied(srcOffset, dstOffset, n);
}

TEST(StreamCopy, LargeOddLengthsAtOddAddresses) {
  for (size_t n : {size_t{65536}, size_t{1000003}, (size_t{8} << 20) + 77}) {
    expectCopied(0, 0, n);
    expectCopied(5, 11, n);
  }
}

TEST(CacheSize, ReadsTheKernelsFigureAndFallsBackOnlyWithoutOne) {
  size_t withOne = lastLevelCacheBytes(1), withTwo = lastLevelCacheBytes(2);
  if (access("/sys/devices/system/cpu/cpu0/cache/index0/size", R_OK) == 0) {
    EXPECT_GE(withOne, size_t{4096});  // no cache the kernel lists is smaller than a page
    EXPECT_EQ(withOne, withTwo);
  } else {
    EXPECT_EQ(withOne, 1u);
    EXPECT_EQ(withTwo, 2u);
  }
}

}  // namespace
}  // namespace slimeccl
