#include "rank_setup.h"

#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace rdma_test {

RankEnv rankEnvFromLauncher() {
  const char* rank = getenv("SLIMECCL_RANK");
  const char* nranks = getenv("SLIMECCL_NRANKS");
  if (rank == nullptr || nranks == nullptr) {
    fprintf(stderr, "SLIMECCL_RANK and SLIMECCL_NRANKS must be set (run under slimeccl-run)\n");
    exit(2);
  }
  return RankEnv{atoi(rank), atoi(nranks)};
}

slimecclComm_t joinComm(const RankEnv& env, const char* program) {
  slimecclUniqueId id;
  requireSuccess(program, env.rank, slimecclGetUniqueId(&id), "slimecclGetUniqueId", nullptr);
  slimecclComm_t comm = nullptr;
  requireSuccess(program, env.rank, slimecclCommInitRank(&comm, env.nranks, id, env.rank), "slimecclCommInitRank",
                 nullptr);
  return comm;
}

void failRank(const char* program, int rank, const std::string& what) {
  printf("%s rank %d: FAILED: %s\n", program, rank, what.c_str());
  fflush(stdout);
  exit(1);
}

void requireSuccess(const char* program, int rank, slimecclResult_t rc, const char* call, slimecclComm_t comm) {
  if (rc == slimecclSuccess) return;
  failRank(program, rank,
           std::string(call) + " returned " + slimecclGetErrorString(rc) + ": " + slimecclGetLastError(comm));
}

double nowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace rdma_test
