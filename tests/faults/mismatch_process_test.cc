// Mismatched calls between forked ranks, over shm and over sockets: the ranks that see the
// difference fail with InvalidUsage and a sentence naming both calls; every other rank ends with
// an error too, well before the timeout, never a hang.
#include <gtest/gtest.h>
#include <stdlib.h>

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
// Long enough for every rank to join (init shares the bound) on a slow, sanitized run.
constexpr int kRootMismatchTimeoutMs = 4000;

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

slimecclResult_t reduceOps(slimecclComm_t comm, int, bool odd) {
  std::vector<float> send(64, 1.0f), recv(64);
  return slimecclAllReduce(send.data(), recv.data(), 64, slimecclFloat, odd ? slimecclMax : slimecclSum, comm,
                           nullptr);
}

// Rank 0 sends 100 floats to rank 1, which receives 50.
slimecclResult_t sendRecvSizes(slimecclComm_t comm, int rank, bool) {
  std::vector<float> buf(100, 1.0f);
  if (rank == 0) return slimecclSend(buf.data(), 100, slimecclFloat, 1, comm, nullptr);
  return slimecclRecv(buf.data(), 50, slimecclFloat, 0, comm, nullptr);
}

const MismatchCase kCases[] = {
    {"AllGatherCounts", 2, 1, gatherCounts, "AllGather(count=100, float", "AllGather(count=200, float"},
    {"AllGatherTypes", 2, 1, gatherTypes, "AllGather(count=64, float", "AllGather(count=64, int32"},
    {"AllGatherAgainstAllReduce", 2, 1, gatherOrReduce, "AllGather(count=64", "AllReduce(count=64, float, sum"},
    {"AllReduceOps", 2, 1, reduceOps, "AllReduce(count=64, float, sum", "AllReduce(count=64, float, max"},
    {"SendRecvSizes", 2, 1, sendRecvSizes, "400 bytes", "200 bytes"},
    // Three and four ranks: the ranks that never talk to the odd one must not hang either.
    {"AllGatherCountsThreeRanks", 3, 2, gatherCounts, "AllGather(count=100, float", "AllGather(count=200, float"},
    {"AllReduceOpsFourRanks", 4, 3, reduceOps, "AllReduce(count=64, float, sum", "AllReduce(count=64, float, max"},
};

class MismatchAcrossProcesses : public ::testing::TestWithParam<std::tuple<const char*, MismatchCase>> {};

TEST_P(MismatchAcrossProcesses, EveryRankFailsAndTheMismatchedOnesNameBothCalls) {
  const char* net = std::get<0>(GetParam());
  const MismatchCase& c = std::get<1>(GetParam());
  setenv("SLIMECCL_NET", net, 1);
  setenv("SLIMECCL_TIMEOUT_MS", std::to_string(kTimeoutMs).c_str(), 1);
  std::vector<RankReport> reports = runForkedRanks(c.nranks, [&](int rank, slimecclComm_t comm) {
    return c.call(comm, rank, rank == c.oddRank);
  });
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

INSTANTIATE_TEST_SUITE_P(Nets, MismatchAcrossProcesses,
                         ::testing::Combine(::testing::Values("shm", "socket"), ::testing::ValuesIn(kCases)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param).name;
                         });

// Two ranks that name different roots both only send to each other (or both only wait): neither
// reads a descriptor from the other, so the mismatch shows as a timeout naming the op and the
// peer, not as InvalidUsage (docs/algorithms.md, wire protocol).
class RootMismatch : public ::testing::TestWithParam<const char*> {};

TEST_P(RootMismatch, DifferentRootsEndAtTheTimeoutNamingThePeer) {
  setenv("SLIMECCL_NET", GetParam(), 1);
  setenv("SLIMECCL_TIMEOUT_MS", std::to_string(kRootMismatchTimeoutMs).c_str(), 1);
  std::vector<RankReport> reports = runForkedRanks(2, [](int rank, slimecclComm_t comm) {
    return broadcastRoots(comm, rank, rank == 1);
  });
  unsetenv("SLIMECCL_NET");
  unsetenv("SLIMECCL_TIMEOUT_MS");
  // The first rank to time out drops its connections: the other may learn of it that way first.
  int timedOut = 0;
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(reports[r].reported) << "rank " << r << " did not report (died or hung)";
    timedOut += reports[r].result == slimecclTimeout;
    EXPECT_TRUE(reports[r].result == slimecclTimeout || reports[r].result == slimecclRemoteError)
        << "rank " << r << ": " << reports[r].error;
    EXPECT_LT(reports[r].seconds, kRootMismatchTimeoutMs / 1000.0 + kWellBeforeTimeoutSeconds) << reports[r].error;
    EXPECT_NE(reports[r].error.find("Broadcast"), std::string::npos) << reports[r].error;
    EXPECT_NE(reports[r].error.find("peer " + std::to_string(1 - r)), std::string::npos) << reports[r].error;
  }
  EXPECT_GE(timedOut, 1);
}

INSTANTIATE_TEST_SUITE_P(Nets, RootMismatch, ::testing::Values("shm", "socket"));

}  // namespace
