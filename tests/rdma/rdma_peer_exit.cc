// The error path: two ranks over the ib module, and rank 1 goes away while a large transfer with
// rank 0 is in flight: it is killed (SIGKILL) while it receives or while it sends, or it stays
// but its RoCE link is cut by the caller ("stalls": rank 1 prints a line once the transfer is in
// flight, then prints the error its own communicator gets, and waits). Rank 0 must get
// slimecclRemoteError with a sentence from the ib module that names peer rank 1 within a bound
// far below the op timeout, not hang; its communicator must then refuse further calls and abort
// cleanly. (Which rank's work requests run out of retries first when the link is cut varies: the
// caller looks for the work completion's status in either rank's output.)
//
// Usage: rdma_peer_exit --victim receives|sends|stalls [--devices rxe_a,rxe_b]
// Rank 0 exits 0 when all of the above holds; rank 1 never exits by itself.
#include <slimeccl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "rank_setup.h"

namespace {

using namespace rdma_test;

constexpr const char* kProgram = "rdma_peer_exit";
constexpr size_t kBytes = 64 << 20;
constexpr double kBoundSeconds = 30;  // the suite runs with SLIMECCL_TIMEOUT_MS=120000
constexpr useconds_t kVictimLifeUs = 400 * 1000;

void warmUp(slimecclComm_t comm, int rank) {
  char out = 1, in = 0;
  int peer = 1 - rank;
  requireSuccess(kProgram, rank, slimecclGroupStart(), "slimecclGroupStart", comm);
  requireSuccess(kProgram, rank, slimecclSend(&out, 1, slimecclChar, peer, comm, nullptr), "slimecclSend", comm);
  requireSuccess(kProgram, rank, slimecclRecv(&in, 1, slimecclChar, peer, comm, nullptr), "slimecclRecv", comm);
  requireSuccess(kProgram, rank, slimecclGroupEnd(), "slimecclGroupEnd", comm);
}

[[noreturn]] void victim(slimecclComm_t comm, const std::string& role, std::vector<char>& buffer) {
  slimecclStream_t stream = nullptr;
  requireSuccess(kProgram, 1, slimecclStreamCreate(&stream), "slimecclStreamCreate", comm);
  bool receives = role != "sends";
  for (int i = 0; i < 4; ++i) {
    slimecclResult_t rc = receives ? slimecclRecv(buffer.data(), kBytes, slimecclChar, 0, comm, stream)
                                   : slimecclSend(buffer.data(), kBytes, slimecclChar, 0, comm, stream);
    requireSuccess(kProgram, 1, rc, receives ? "slimecclRecv" : "slimecclSend", comm);
  }
  usleep(kVictimLifeUs);
  if (role == "stalls") {
    printf("%s rank 1: transfer in flight, waiting for the link to be cut\n", kProgram);
    fflush(stdout);
    slimecclResult_t async = slimecclSuccess;
    while (async == slimecclSuccess) {
      usleep(100 * 1000);
      slimecclCommGetAsyncError(comm, &async);
    }
    printf("%s rank 1: its communicator failed: %s\n", kProgram, slimecclGetLastError(comm));
    fflush(stdout);
    for (;;) pause();
  }
  printf("%s rank 1: killing itself mid-transfer\n", kProgram);
  fflush(stdout);
  raise(SIGKILL);
  _exit(1);
}

int survivor(slimecclComm_t comm, const std::string& role, std::vector<char>& buffer) {
  bool victimReceives = role != "sends";
  double start = nowSeconds();
  slimecclResult_t rc = slimecclSuccess;
  int completed = 0;
  // On fast hardware a transfer can finish before the peer dies: keep going until one fails.
  for (; completed < 64 && rc == slimecclSuccess; ++completed)
    rc = victimReceives ? slimecclSend(buffer.data(), kBytes, slimecclChar, 1, comm, nullptr)
                        : slimecclRecv(buffer.data(), kBytes, slimecclChar, 1, comm, nullptr);
  double seconds = nowSeconds() - start;
  std::string sentence = slimecclGetLastError(comm);
  printf("%s rank 0: %s failed after %.2f s (%d transfers done): %s: %s\n", kProgram, victimReceives ? "Send" : "Recv",
         seconds, completed - 1, slimecclGetErrorString(rc), sentence.c_str());
  if (rc != slimecclRemoteError) failRank(kProgram, 0, "expected slimecclRemoteError");
  if (seconds > kBoundSeconds)
    failRank(kProgram, 0, "the error took longer than " + std::to_string(kBoundSeconds) + " s");
  if (sentence.find("ib:") == std::string::npos) failRank(kProgram, 0, "the sentence does not come from the ib module");
  if (sentence.find("peer rank 1") == std::string::npos)
    failRank(kProgram, 0, "the sentence does not name peer rank 1");
  char byte = 0;
  slimecclResult_t later = slimecclSend(&byte, 1, slimecclChar, 1, comm, nullptr);
  if (later == slimecclSuccess) failRank(kProgram, 0, "a Send after the failure succeeded");
  slimecclResult_t async = slimecclSuccess;
  slimecclCommGetAsyncError(comm, &async);
  if (async == slimecclSuccess) failRank(kProgram, 0, "slimecclCommGetAsyncError reports no error");
  requireSuccess(kProgram, 0, slimecclCommAbort(comm), "slimecclCommAbort", nullptr);
  printf("%s rank 0: OK\n", kProgram);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string devices, victimRole;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--devices") == 0)
      devices = argv[i + 1];
    else if (strcmp(argv[i], "--victim") == 0)
      victimRole = argv[i + 1];
  }
  if (victimRole != "receives" && victimRole != "sends" && victimRole != "stalls") {
    fprintf(stderr, "usage: %s --victim receives|sends|stalls [--devices DEV0,DEV1]\n", argv[0]);
    return 2;
  }
  RankEnv env = rankEnvFromLauncher();
  if (env.nranks != 2) failRank(kProgram, env.rank, "needs exactly 2 ranks");
  chooseByRank("SLIMECCL_IB_HCA", devices, env.rank);
  slimecclComm_t comm = joinComm(env, kProgram);
  warmUp(comm, env.rank);
  std::vector<char> buffer(kBytes, static_cast<char>(env.rank));
  if (env.rank == 1) victim(comm, victimRole, buffer);
  return survivor(comm, victimRole, buffer);
}
