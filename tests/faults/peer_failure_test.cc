#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "slimeccl.h"

namespace {

using Clock = std::chrono::steady_clock;

enum class PeerFate { Exits, Aborts };

struct Outcome {
  slimecclResult_t result = slimecclSuccess;
  double seconds = 0;
  std::string error;
};

// Rank 0 (this child) waits in a Recv from rank 1, which first sends one message (so that the
// connection exists) and then exits without cleanup or aborts its comm. Rank 0 writes what it
// saw to `report`.
void runRankZero(int idPipe, int report) {
  slimecclUniqueId id;
  slimecclComm_t comm;
  if (slimecclGetUniqueId(&id) != slimecclSuccess) _exit(10);
  if (write(idPipe, &id, sizeof(id)) != sizeof(id)) _exit(11);
  if (slimecclCommInitRank(&comm, 2, id, 0) != slimecclSuccess) _exit(12);
  int first = 0, second = 0;
  if (slimecclRecv(&first, 1, slimecclInt32, 1, comm, nullptr) != slimecclSuccess || first != 7) _exit(13);
  auto start = Clock::now();
  Outcome out;
  out.result = slimecclRecv(&second, 1, slimecclInt32, 1, comm, nullptr);
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::string error = slimecclGetLastError(comm);
  int code = out.result;
  if (write(report, &code, sizeof(code)) != sizeof(code) ||
      write(report, &out.seconds, sizeof(double)) != sizeof(double) ||
      write(report, error.c_str(), error.size()) != static_cast<ssize_t>(error.size()))
    _exit(14);
  slimecclCommDestroy(comm);
  _exit(0);
}

void runRankOne(int idPipe, PeerFate fate) {
  slimecclUniqueId id;
  slimecclComm_t comm;
  if (read(idPipe, &id, sizeof(id)) != sizeof(id)) _exit(20);
  if (slimecclCommInitRank(&comm, 2, id, 1) != slimecclSuccess) _exit(21);
  int value = 7;
  if (slimecclSend(&value, 1, slimecclInt32, 0, comm, nullptr) != slimecclSuccess) _exit(22);
  usleep(200 * 1000);  // let rank 0 block in its second Recv
  if (fate == PeerFate::Aborts) slimecclCommAbort(comm);
  _exit(0);
}

Outcome runScenario(const char* net, PeerFate fate) {
  setenv("SLIMECCL_NET", net, 1);
  setenv("SLIMECCL_TIMEOUT_MS", "30000", 1);
  int idPipe[2], report[2];
  EXPECT_EQ(pipe(idPipe), 0);
  EXPECT_EQ(pipe(report), 0);
  pid_t zero = fork();
  if (zero == 0) runRankZero(idPipe[1], report[1]);
  pid_t one = fork();
  if (one == 0) runRankOne(idPipe[0], fate);
  close(report[1]);
  int status = 0;
  waitpid(one, &status, 0);
  waitpid(zero, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank 0 exit status " << status;
  Outcome out;
  int code = 0;
  EXPECT_EQ(read(report[0], &code, sizeof(code)), static_cast<ssize_t>(sizeof(code)));
  EXPECT_EQ(read(report[0], &out.seconds, sizeof(double)), static_cast<ssize_t>(sizeof(double)));
  char text[2048] = {0};
  ssize_t n = read(report[0], text, sizeof(text) - 1);
  out.error.assign(text, n > 0 ? n : 0);
  out.result = static_cast<slimecclResult_t>(code);
  for (int fd : {idPipe[0], idPipe[1], report[0]}) close(fd);
  unsetenv("SLIMECCL_NET");
  unsetenv("SLIMECCL_TIMEOUT_MS");
  return out;
}

class PeerFailure : public ::testing::TestWithParam<const char*> {};

TEST_P(PeerFailure, ADeadPeerEndsTheWaitWithARemoteErrorNamingIt) {
  Outcome out = runScenario(GetParam(), PeerFate::Exits);
  EXPECT_EQ(out.result, slimecclRemoteError) << out.error;
  EXPECT_LT(out.seconds, 3.0) << "long before the 30 s timeout";
  EXPECT_NE(out.error.find("rank 0"), std::string::npos) << out.error;
  EXPECT_NE(out.error.find("peer 1"), std::string::npos) << out.error;
}

TEST_P(PeerFailure, AnAbortingPeerEndsTheWaitWithARemoteError) {
  Outcome out = runScenario(GetParam(), PeerFate::Aborts);
  EXPECT_EQ(out.result, slimecclRemoteError) << out.error;
  EXPECT_LT(out.seconds, 3.0) << "long before the 30 s timeout";
  EXPECT_NE(out.error.find("peer 1"), std::string::npos) << out.error;
}

INSTANTIATE_TEST_SUITE_P(Nets, PeerFailure, ::testing::Values("shm", "socket"));

}  // namespace
