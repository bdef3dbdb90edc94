#include "single_rank_comm.h"

#include "rank_check.h"

namespace slimeccl_test {

void SingleRankComm::SetUp() {
  slimecclUniqueId id{};
  ASSERT_EQ(slimecclSuccess, slimecclGetUniqueId(&id)) << lastErrorText(nullptr);
  ASSERT_EQ(slimecclSuccess, slimecclCommInitRank(&comm_, 1, id, 0)) << lastErrorText(nullptr);
  ASSERT_NE(nullptr, comm_);
}

void SingleRankComm::TearDown() {
  if (comm_ == nullptr) return;
  EXPECT_EQ(slimecclSuccess, slimecclCommFinalize(comm_)) << lastErrorText(comm_);
  EXPECT_EQ(slimecclSuccess, slimecclCommDestroy(comm_)) << lastErrorText(nullptr);
}

void expectRejected(slimecclResult_t expected, slimecclResult_t result, const std::string& call) {
  EXPECT_EQ(expected, result) << call << "; last error: " << lastErrorText(nullptr);
  if (result == expected) {
    const char* error = slimecclGetLastError(nullptr);
    EXPECT_TRUE(error != nullptr && error[0] != '\0') << call << " left slimecclGetLastError(NULL) empty";
  }
}

}  // namespace slimeccl_test
