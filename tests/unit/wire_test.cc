#include <gtest/gtest.h>

#include "src/bootstrap/wire.h"
#include "src/base/error.h"

namespace slimeccl {
namespace {

WireHeader header(WireType type, uint32_t length) {
  return WireHeader{kWireMagic, static_cast<uint32_t>(type), length, 0};
}

TEST(Wire, AcceptsTheExpectedHeader) {
  EXPECT_EQ(validateHeader(header(WireType::Hello, sizeof(HelloPayload)), WireType::Hello, sizeof(HelloPayload)),
            slimecclSuccess);
}

TEST(Wire, RejectsBadMagicTypeAndLength) {
  WireHeader h = header(WireType::Hello, sizeof(HelloPayload));
  h.magic = 0x12345678;
  EXPECT_EQ(validateHeader(h, WireType::Hello, sizeof(HelloPayload)), slimecclRemoteError);
  EXPECT_NE(threadError().find("magic"), std::string::npos);
  EXPECT_EQ(validateHeader(header(WireType::Table, 10), WireType::Hello, sizeof(HelloPayload)), slimecclRemoteError);
  EXPECT_EQ(validateHeader(header(WireType::Hello, 1u << 30), WireType::Hello, sizeof(HelloPayload)),
            slimecclRemoteError);
  EXPECT_NE(threadError().find("length"), std::string::npos);
}

TEST(Wire, RootErrorLengthIsBounded) {
  EXPECT_EQ(validateRootError(header(WireType::RootError, sizeof(int32_t) + 10)), slimecclSuccess);
  EXPECT_EQ(validateRootError(header(WireType::RootError, 2)), slimecclRemoteError);
  EXPECT_EQ(validateRootError(header(WireType::RootError, sizeof(int32_t) + kMaxErrorText + 1)), slimecclRemoteError);
}

}  // namespace
}  // namespace slimeccl
