#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>

#include "src/bootstrap/unique_id.h"
#include "src/base/error.h"

namespace slimeccl {
namespace {

UniqueIdContents sampleId() {
  UniqueIdContents id{};
  EXPECT_EQ(parseHostPort("127.0.0.1:4242", &id.root), slimecclSuccess);
  for (size_t i = 0; i < kSecretBytes; ++i) id.secret.bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  id.rootAtRankZero = true;
  return id;
}

TEST(UniqueId, RoundTripKeepsAddressSecretAndFlag) {
  UniqueIdContents in = sampleId();
  slimecclUniqueId encoded;
  encodeUniqueId(in, &encoded);
  UniqueIdContents out{};
  ASSERT_EQ(decodeUniqueId(encoded, &out), slimecclSuccess);
  EXPECT_EQ(out.root.toString(), "127.0.0.1:4242");
  EXPECT_EQ(memcmp(out.secret.bytes, in.secret.bytes, kSecretBytes), 0);
  EXPECT_TRUE(out.rootAtRankZero);
}

TEST(UniqueId, JunkIsRejectedWithASentence) {
  slimecclUniqueId junk;
  memset(&junk, 0xab, sizeof(junk));
  UniqueIdContents out{};
  EXPECT_EQ(decodeUniqueId(junk, &out), slimecclInvalidArgument);
  EXPECT_NE(threadError().find("not made by slimecclGetUniqueId"), std::string::npos);
}

TEST(UniqueId, WrongVersionIsRejected) {
  slimecclUniqueId encoded;
  encodeUniqueId(sampleId(), &encoded);
  encoded.internal[4] = 9;  // version field follows the 4-byte magic
  UniqueIdContents out{};
  EXPECT_EQ(decodeUniqueId(encoded, &out), slimecclInvalidArgument);
  EXPECT_NE(threadError().find("version"), std::string::npos);
}

TEST(UniqueId, MissingPortIsRejected) {
  UniqueIdContents in = sampleId();
  in.root.setPort(0);
  slimecclUniqueId encoded;
  encodeUniqueId(in, &encoded);
  UniqueIdContents out{};
  EXPECT_EQ(decodeUniqueId(encoded, &out), slimecclInvalidArgument);
}

TEST(UniqueId, FromEnvUsesTheHexSecret) {
  setenv("SLIMECCL_COMM_SECRET", "00112233445566778899aabbccddeeff", 1);
  UniqueIdContents id{};
  ASSERT_EQ(uniqueIdFromEnv("127.0.0.1:5000", &id), slimecclSuccess);
  EXPECT_TRUE(id.rootAtRankZero);
  EXPECT_EQ(id.root.port(), 5000);
  EXPECT_EQ(id.secret.bytes[0], 0x00);
  EXPECT_EQ(id.secret.bytes[15], 0xff);
  EXPECT_EQ(id.secret.bytes[16], 0x00);
  unsetenv("SLIMECCL_COMM_SECRET");
}

TEST(UniqueId, FromEnvRejectsAShortOrNonHexSecret) {
  UniqueIdContents id{};
  setenv("SLIMECCL_COMM_SECRET", "abc", 1);
  EXPECT_EQ(uniqueIdFromEnv("127.0.0.1:5000", &id), slimecclInvalidArgument);
  setenv("SLIMECCL_COMM_SECRET", "zz112233445566778899aabbccddeeff", 1);
  EXPECT_EQ(uniqueIdFromEnv("127.0.0.1:5000", &id), slimecclInvalidArgument);
  unsetenv("SLIMECCL_COMM_SECRET");
}

// The length is checked before any digit is stored: a long secret must not run past the field.
TEST(UniqueId, FromEnvRejectsASecretLongerThanTheField) {
  struct Guarded {
    UniqueIdContents id;
    unsigned char after[256];
  } g{};
  memset(g.after, 0x5a, sizeof(g.after));
  for (size_t digits : {size_t{66}, size_t{200}, size_t{400}}) {
    setenv("SLIMECCL_COMM_SECRET", std::string(digits, 'f').c_str(), 1);
    EXPECT_EQ(uniqueIdFromEnv("127.0.0.1:5000", &g.id), slimecclInvalidArgument) << digits;
    EXPECT_NE(threadError().find("32 to 64 hex digits"), std::string::npos) << threadError();
  }
  unsetenv("SLIMECCL_COMM_SECRET");
  for (unsigned char byte : g.after) ASSERT_EQ(byte, 0x5a);
}

TEST(UniqueId, FromEnvWithoutSecretIsTheSameEverywhere) {
  unsetenv("SLIMECCL_COMM_SECRET");
  UniqueIdContents a{}, b{};
  ASSERT_EQ(uniqueIdFromEnv("127.0.0.1:5000", &a), slimecclSuccess);
  ASSERT_EQ(uniqueIdFromEnv("127.0.0.1:5000", &b), slimecclSuccess);
  EXPECT_EQ(memcmp(a.secret.bytes, b.secret.bytes, kSecretBytes), 0);
}

TEST(UniqueId, BadCommIdIsRejected) {
  UniqueIdContents id{};
  EXPECT_EQ(uniqueIdFromEnv("no-port-here", &id), slimecclInvalidArgument);
  EXPECT_NE(threadError().find("SLIMECCL_COMM_ID"), std::string::npos);
  EXPECT_EQ(uniqueIdFromEnv("127.0.0.1:99999", &id), slimecclInvalidArgument);
}

}  // namespace
}  // namespace slimeccl
