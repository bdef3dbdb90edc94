// Mismatched calls between forked ranks, over shm and over sockets: the ranks that see the
// difference fail with InvalidUsage and a sentence naming both calls; every other rank ends with
// an error too, well before the timeout, never a hang.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <tuple>
#include <vector>

#include "forked_ranks.h"
#include "slimeccl.h"

namespace {

using slimeccl_test::RankReport;
using slimeccl_test::runForkedRanks;

constexpr int kTimeoutMs = 30000;
constexpr double kWellBeforeTimeoutSeconds = 10;

struct MismatchCase {
  const char* name;
  int nranks;
  int oddRank;  // the rank whose call differs
  // The call of every rank but oddRank (odd = false) and of oddRank (odd = true).
  slimecclResult_t (*call)(slimecclComm_t comm, int rank, bool odd);
  const char* usualCall;  // how the sentence names the two calls
  const char* oddCall;
};

int commSize(slimecclComm_t comm) {
  int n = 0;
  slimecclCommCount(comm, &n);
  return n;
}

slimecclResult_t gatherCounts(slimecclComm_t comm, int, bool odd) {
  std::vector<float> send(odd ? 200 : 100, 1.0f), recv(200 * commSize(comm));
  return slimecclAllGather(send.data(), recv.data(), send.size(), slimecclFloat, comm, nullptr);
}

slimecclResult_t gatherTypes(slimecclComm_t comm, int, bool odd) {
  std::vector<double> send(64, 1.0), recv(64 * commSize(comm));
  return slimecclAllGather(send.data(), recv.data(), 64, odd ? slimecclInt32 : slimecclFloat, comm, nullptr);
}

slimecclResult_t gatherOrReduce(slimecclComm_t comm, int, bool odd) {
  std::vector<float> send(64, 1.0f), recv(64 * commSize(comm));
  if (odd) return slimecclAllReduce(send.data(), recv.data(), 64, slimecclFloat, slimecclSum, comm, nullptr);
  return slimecclAllGather(send.data(), recv.data(), 64, slimecclFloat, comm, nullptr);
}

slimecclResult_t broadcastRoots(slimecclComm_t comm, int, bool odd) {
  std::vector<float> buf(64, 1.0f);
  return slimecclBroadcast(buf.data(), buf.data(), 64, slimecclFloat, odd ? 1 : 0, comm, nullptr);
}

// Rank `odd` names root 2 where the others name root 0.
slimecclResult_t reduceRoots(slimecclComm_t comm, int, bool odd) {
  std::vector<float> send(64, 1.0f), recv(64);
  return slimecclReduce(send.data(), recv.data(), 64, slimecclFloat, slimecclSum, odd ? 2 : 0, comm, nullptr);
}

slimecclResult_t reduceOps(slimecclComm_t comm, int, bool odd) {
  std::vector<float> send(64, 1.0f), recv(64);
  return slimecclAllReduce(send.data(), recv.data(), 64, slimecclFloat, odd ? slimecclMax : slimecclSum, comm, nullptr);
}

// Rank 0 sends 8192 floats to rank 1, which receives 4096: both above the eager size, so the
// Send waits for the receiver's descriptor and fails too.
slimecclResult_t sendRecvSizes(slimecclComm_t comm, int rank, bool) {
  std::vector<float> buf(8192, 1.0f);
  if (rank == 0) return slimecclSend(buf.data(), 8192, slimecclFloat, 1, comm, nullptr);
  return slimecclRecv(buf.data(), 4096, slimecclFloat, 0, comm, nullptr);
}

const MismatchCase kCases[] = {
    {"AllGatherCounts", 2, 1, gatherCounts, "AllGather(count=100, float", "AllGather(count=200, float"},
    {"AllGatherTypes", 2, 1, gatherTypes, "AllGather(count=64, float", "AllGather(count=64, int32"},
    {"AllGatherAgainstAllReduce", 2, 1, gatherOrReduce, "AllGather(count=64", "AllReduce(count=64, float, sum"},
    // Different roots can make both ranks only send to each other (or only wait).
    {"BroadcastRoots", 2, 1, broadcastRoots, "Broadcast(count=64, float, root 0", "Broadcast(count=64, float, root 1"},
    {"AllReduceOps", 2, 1, reduceOps, "AllReduce(count=64, float, sum", "AllReduce(count=64, float, max"},
    {"SendRecvSizes", 2, 1, sendRecvSizes, "32768 bytes", "16384 bytes"},
    // Three and four ranks: the ranks that never talk to the odd one must not hang either.
    {"AllGatherCountsThreeRanks", 3, 2, gatherCounts, "AllGather(count=100, float", "AllGather(count=200, float"},
    {"ReduceRootsThreeRanks", 3, 2, reduceRoots, "Reduce(count=64, float, sum, root 0",
     "Reduce(count=64, float, sum, root 2"},
    {"AllReduceOpsFourRanks", 4, 3, reduceOps, "AllReduce(count=64, float, sum", "AllReduce(count=64, float, max"},
};

class MismatchAcrossProcesses : public ::testing::TestWithParam<std::tuple<const char*, MismatchCase>> {};

TEST_P(MismatchAcrossProcesses, EveryRankFailsAndTheMismatchedOnesNameBothCalls) {
  const char* net = std::get<0>(GetParam());
  const MismatchCase& c = std::get<1>(GetParam());
  setenv("SLIMECCL_NET", net, 1);
  setenv("SLIMECCL_TIMEOUT_MS", std::to_string(kTimeoutMs).c_str(), 1);
  std::vector<RankReport> reports =
      runForkedRanks(c.nranks, [&](int rank, slimecclComm_t comm) { return c.call(comm, rank, rank == c.oddRank); });
  unsetenv("SLIMECCL_NET");
  unsetenv("SLIMECCL_TIMEOUT_MS");
  int namingBoth = 0;
  for (int r = 0; r < c.nranks; ++r) {
    const RankReport& rep = reports[r];
    ASSERT_TRUE(rep.reported) << "rank " << r << " did not report (died or hung)";
    EXPECT_NE(rep.result, slimecclSuccess) << "rank " << r;
    EXPECT_LT(rep.seconds, kWellBeforeTimeoutSeconds) << "rank " << r << ": " << rep.error;
    if (rep.result != slimecclInvalidUsage) {
      EXPECT_EQ(rep.result, slimecclRemoteError) << "rank " << r << ": " << rep.error;
      continue;
    }
    EXPECT_NE(rep.error.find(c.usualCall), std::string::npos) << "rank " << r << ": " << rep.error;
    EXPECT_NE(rep.error.find(c.oddCall), std::string::npos) << "rank " << r << ": " << rep.error;
    EXPECT_NE(rep.error.find("rank " + std::to_string(r)), std::string::npos) << rep.error;
    ++namingBoth;
  }
  // The odd rank and at least one rank that talks to it.
  EXPECT_GE(namingBoth, 2);
  EXPECT_EQ(reports[c.oddRank].result, slimecclInvalidUsage) << reports[c.oddRank].error;
}

// Rank 1's call differs from rank 2's; rank 0 dies once the links are up. Rank 2 starts late,
// when rank 1's descriptor and rank 0's closed connections are all there to read: whichever it
// meets first, the mismatch is what it reports, not the lost peer. Over sockets, where no shared
// slots announce the calls.
TEST(MismatchBesideADeadPeer, TheMismatchIsReportedNotTheLostLink) {
  setenv("SLIMECCL_NET", "socket", 1);
  setenv("SLIMECCL_ALGO", "allgather:ring", 1);
  setenv("SLIMECCL_TIMEOUT_MS", std::to_string(kTimeoutMs).c_str(), 1);
  std::vector<RankReport> reports = runForkedRanks(3, [](int rank, slimecclComm_t comm) {
    std::vector<float> send(200, 1.0f), recv(600);
    slimecclResult_t warm = slimecclAllGather(send.data(), recv.data(), 100, slimecclFloat, comm, nullptr);
    if (warm != slimecclSuccess) return slimecclInternalError;
    if (rank == 0) _exit(0);
    if (rank == 2) usleep(500 * 1000);
    return slimecclAllGather(send.data(), recv.data(), rank == 1 ? 200 : 100, slimecclFloat, comm, nullptr);
  });
  unsetenv("SLIMECCL_NET");
  unsetenv("SLIMECCL_ALGO");
  unsetenv("SLIMECCL_TIMEOUT_MS");
  const RankReport& late = reports[2];
  ASSERT_TRUE(late.reported) << "rank 2 died or hung";
  EXPECT_LT(late.seconds, kWellBeforeTimeoutSeconds) << late.error;
  EXPECT_EQ(late.result, slimecclInvalidUsage) << late.error;
  EXPECT_NE(late.error.find("AllGather(count=100, float"), std::string::npos) << late.error;
  EXPECT_NE(late.error.find("AllGather(count=200, float"), std::string::npos) << late.error;
}

// An eager Send (at most 8 KiB) completes once handed over, as MPI's do; the receiver whose Recv
// is smaller fails naming both calls, and the sender's next call with that peer fails instead of
// waiting for the timeout.
class EagerSendMismatch : public ::testing::TestWithParam<const char*> {};

TEST_P(EagerSendMismatch, ReceiverNamesBothCallsAndTheSendersNextCallFails) {
  setenv("SLIMECCL_NET", GetParam(), 1);
  setenv("SLIMECCL_TIMEOUT_MS", std::to_string(kTimeoutMs).c_str(), 1);
  std::vector<RankReport> reports = runForkedRanks(2, [](int rank, slimecclComm_t comm) {
    std::vector<float> buf(100, 1.0f);
    if (rank == 1) return slimecclRecv(buf.data(), 50, slimecclFloat, 0, comm, nullptr);
    slimecclResult_t sent = slimecclSend(buf.data(), 100, slimecclFloat, 1, comm, nullptr);
    // A failed Send shows as InternalError, which the test does not accept.
    if (sent != slimecclSuccess) return slimecclInternalError;
    return slimecclRecv(buf.data(), 1, slimecclFloat, 1, comm, nullptr);
  });
  unsetenv("SLIMECCL_NET");
  unsetenv("SLIMECCL_TIMEOUT_MS");
  for (const RankReport& rep : reports) {
    ASSERT_TRUE(rep.reported) << "a rank died or hung";
    EXPECT_LT(rep.seconds, kWellBeforeTimeoutSeconds) << rep.error;
  }
  EXPECT_EQ(reports[1].result, slimecclInvalidUsage) << reports[1].error;
  EXPECT_NE(reports[1].error.find("400 bytes"), std::string::npos) << reports[1].error;
  EXPECT_NE(reports[1].error.find("200 bytes"), std::string::npos) << reports[1].error;
  EXPECT_TRUE(reports[0].result == slimecclRemoteError || reports[0].result == slimecclInvalidUsage)
      << "rank 0 (" << reports[0].result << "): " << reports[0].error;
}

INSTANTIATE_TEST_SUITE_P(Nets, EagerSendMismatch, ::testing::Values("shm", "socket"));

INSTANTIATE_TEST_SUITE_P(Nets, MismatchAcrossProcesses,
                         ::testing::Combine(::testing::Values("shm", "socket"), ::testing::ValuesIn(kCases)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param).name;
                         });

}  // namespace
