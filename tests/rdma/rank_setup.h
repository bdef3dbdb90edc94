// What each RDMA test rank does first: pick its verbs device from the list given on the command
// line (rank r takes entry r mod n, so ranks alternate between the two soft-RoCE "hosts"), then
// join the communicator described by the launcher's environment.
#pragma once

#include <slimeccl.h>

#include <cstdint>
#include <string>

#include "choose_by_rank.h"

namespace rdma_test {

struct RankEnv {
  int rank;
  int nranks;
};

// Reads SLIMECCL_RANK and SLIMECCL_NRANKS; exits when they are missing.
RankEnv rankEnvFromLauncher();
slimecclComm_t joinComm(const RankEnv& env, const char* program);

// Prints "<program> rank R: FAILED: <what>" and exits 1.
[[noreturn]] void failRank(const char* program, int rank, const std::string& what);
// Fails with the call, its result and the library's last error when rc is not Success.
void requireSuccess(const char* program, int rank, slimecclResult_t rc, const char* call, slimecclComm_t comm);

double nowSeconds();

}  // namespace rdma_test
