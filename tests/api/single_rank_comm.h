// A fixture holding a one-rank communicator of this process, for argument checks that must be
// rejected before any communication happens.
#pragma once

#include <slimeccl.h>

#include <gtest/gtest.h>

#include <string>

namespace slimeccl_test {

class SingleRankComm : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  slimecclComm_t comm_ = nullptr;
};

// Expects `result` to be `expected` and the thread's last error to hold a sentence about it.
void expectRejected(slimecclResult_t expected, slimecclResult_t result, const std::string& call);

}  // namespace slimeccl_test
