// Library-wide queries that need no communicator: version and error strings.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "rank_check.h"

namespace slimeccl_test {
namespace {

TEST(LibraryInfo, VersionMatchesTheHeader) {
  int version = -1;
  ASSERT_EQ(slimecclSuccess, slimecclGetVersion(&version));
  EXPECT_EQ(SLIMECCL_VERSION_CODE, version);
}

TEST(LibraryInfo, EveryResultHasADistinctErrorString) {
  std::set<std::string> seen;
  for (int code = slimecclSuccess; code < slimecclNumResults; ++code) {
    const char* text = slimecclGetErrorString(static_cast<slimecclResult_t>(code));
    ASSERT_NE(nullptr, text) << "result " << code;
    EXPECT_STRNE("", text) << "result " << code;
    EXPECT_TRUE(seen.insert(text).second) << "result " << code << " shares its string \"" << text << "\"";
  }
}

TEST(LibraryInfo, UnknownResultStillHasAString) {
  for (int code : {static_cast<int>(slimecclNumResults), 1000, -1}) {
    const char* text = slimecclGetErrorString(static_cast<slimecclResult_t>(code));
    ASSERT_NE(nullptr, text) << "result " << code;
    EXPECT_STRNE("", text) << "result " << code;
  }
}

TEST(LibraryInfo, LastErrorAfterABadCallIsASentence) {
  ASSERT_EQ(slimecclInvalidArgument, slimecclGetVersion(nullptr));
  const char* text = slimecclGetLastError(nullptr);
  ASSERT_NE(nullptr, text);
  EXPECT_STRNE("", text);
}

}  // namespace
}  // namespace slimeccl_test
