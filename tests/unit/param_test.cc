#include <gtest/gtest.h>
#include <stdlib.h>

#include <climits>
#include <cstdint>

#include "src/base/param.h"
#include "src/base/sys/time.h"

namespace slimeccl {
namespace {

constexpr const char* kVar = "SLIMECCL_PARAM_TEST_VALUE";

class EnvValue {
 public:
  explicit EnvValue(const char* text) { setenv(kVar, text, 1); }
  ~EnvValue() { unsetenv(kVar); }
};

TEST(EnvBytes, ReadsSuffixes) {
  EnvValue v("3M");
  EXPECT_EQ(envBytes(kVar, 7), size_t{3} << 20);
}

TEST(EnvBytes, UnsetOrEmptyIsTheFallback) {
  unsetenv(kVar);
  EXPECT_EQ(envBytes(kVar, 7), 7u);
  EnvValue v("");
  EXPECT_EQ(envBytes(kVar, 7), 7u);
}

// "-1" must not become the largest size (strtoull's reading): chunk counts computed from it wrapped
// to zero and ops moved nothing.
TEST(EnvBytes, NegativeOrGarbageIsTheFallback) {
  for (const char* text : {"-1", " -4096", "-1K", "512KB", "fast", "K", "0x"}) {
    EnvValue v(text);
    EXPECT_EQ(envBytes(kVar, 7), 7u) << text;
  }
}

TEST(EnvBytes, ClampsToTheRangeAndNeverWraps) {
  {
    EnvValue v("99999999999999999999");
    EXPECT_EQ(envBytes(kVar, 7, 0, 1u << 30), size_t{1} << 30);
  }
  {
    EnvValue v("20000000000G");  // would wrap when shifted
    EXPECT_EQ(envBytes(kVar, 7, 0, 1u << 30), size_t{1} << 30);
    EXPECT_EQ(envBytes(kVar, 7), SIZE_MAX);
  }
  {
    EnvValue v("100");
    EXPECT_EQ(envBytes(kVar, 7, 4096, 1u << 30), 4096u);
  }
}

TEST(EnvInt, ClampsAndRejectsGarbage) {
  {
    EnvValue v("-5");
    EXPECT_EQ(envInt(kVar, 3, -1, 10), -1);
  }
  {
    EnvValue v("99999999999999999999999");
    EXPECT_EQ(envInt(kVar, 3, 1, 64), 64);
  }
  {
    EnvValue v("30s");
    EXPECT_EQ(envInt(kVar, 3), 3);
  }
  {
    EnvValue v("0x10");
    EXPECT_EQ(envInt(kVar, 3), 16);
  }
}

TEST(CommParams, ChunkBytesOfMinusOneIsTheTunersChoice) {
  setenv("SLIMECCL_CHUNK_BYTES", "-1", 1);
  EXPECT_EQ(CommParams::fromEnv().chunkBytes, 0u);
  setenv("SLIMECCL_CHUNK_BYTES", "18446744073709551615", 1);
  EXPECT_EQ(CommParams::fromEnv().chunkBytes, kMaxChunkBytes);
  unsetenv("SLIMECCL_CHUNK_BYTES");
}

TEST(CommParams, RelaySlotsLieOnWholePagesWithinTheirBounds) {
  unsetenv("SLIMECCL_RELAY_SLOT_BYTES");
  EXPECT_FALSE(CommParams::fromEnv().relaySlotBytes.has_value());
  setenv("SLIMECCL_RELAY_SLOT_BYTES", "10000", 1);
  EXPECT_EQ(CommParams::fromEnv().relaySlotBytes, 8192u);
  setenv("SLIMECCL_RELAY_SLOT_BYTES", "1", 1);
  EXPECT_EQ(CommParams::fromEnv().relaySlotBytes, kMinRelaySlotBytes);
  setenv("SLIMECCL_RELAY_SLOT_BYTES", "1G", 1);
  EXPECT_EQ(CommParams::fromEnv().relaySlotBytes, kMaxRelaySlotBytes);
  unsetenv("SLIMECCL_RELAY_SLOT_BYTES");
  EXPECT_FALSE(CommParams::fromEnv().p2pDisable);
  setenv("SLIMECCL_P2P_DISABLE", "1", 1);
  EXPECT_TRUE(CommParams::fromEnv().p2pDisable);
  unsetenv("SLIMECCL_P2P_DISABLE");
}

// A timeout meant as "for ever" must not overflow into one already past.
TEST(Deadline, AHugeTimeoutNeverExpires) {
  EXPECT_TRUE(Deadline::afterMs(INT64_MAX).isNever());
  EXPECT_TRUE(Deadline::afterMs(INT64_MAX / 1000).isNever());
  EXPECT_FALSE(Deadline::afterMs(INT64_MAX / 1000).expired());
  Deadline hour = Deadline::afterMs(3600 * 1000);
  EXPECT_FALSE(hour.isNever());
  EXPECT_FALSE(hour.expired());
}

}  // namespace
}  // namespace slimeccl
