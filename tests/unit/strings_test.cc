#include <gtest/gtest.h>

#include "src/base/util/secure.h"
#include "src/base/util/strings.h"

namespace slimeccl {
namespace {

TEST(Strings, SplitListTrimsAndDropsEmpty) {
  EXPECT_EQ(splitList(" a, b,,c ", ','), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(splitList("", ',').empty());
}

TEST(Strings, HexRoundTrip) {
  unsigned char in[4] = {0x00, 0x7f, 0x80, 0xff}, out[4];
  std::string hex = toHex(in, 4);
  EXPECT_EQ(hex, "007f80ff");
  ASSERT_TRUE(fromHex(hex, out, 4));
  EXPECT_EQ(memcmp(in, out, 4), 0);
  EXPECT_FALSE(fromHex("007f80f", out, 4));
  EXPECT_FALSE(fromHex("007f80fg", out, 4));
}

TEST(Strings, JoinIntsAndHumanBytes) {
  EXPECT_EQ(joinInts({2, 5, 7}), "2, 5, 7");
  EXPECT_EQ(humanBytes(512), "512 B");
  EXPECT_EQ(humanBytes(1536), "1.5 KiB");
}

TEST(Secure, ConstantTimeCompare) {
  unsigned char a[32] = {1}, b[32] = {1};
  EXPECT_TRUE(equalConstantTime(a, b, 32));
  b[31] = 2;
  EXPECT_FALSE(equalConstantTime(a, b, 32));
}

TEST(Secure, RandomBytesDiffer) {
  unsigned char a[32], b[32];
  ASSERT_TRUE(randomBytes(a, 32));
  ASSERT_TRUE(randomBytes(b, 32));
  EXPECT_FALSE(equalConstantTime(a, b, 32));
}

}  // namespace
}  // namespace slimeccl
