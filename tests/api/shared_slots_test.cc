// Tiny collectives of a one-host communicator over its shared slots (src/exec/mailbox.h): data
// right through many rounds (the two slots of a rank alternate), at a slot's last byte and one
// element past it, next to point-to-point traffic in one group, several in one group, a
// mismatched call failing on every rank with both calls named (also across the slots' limit),
// a peer that never comes turning into a timeout that names its slot, and the same calls with
// the slots switched off.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "collective_sweep.h"
#include "cross_rank_signal.h"
#include "harness.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

// The algorithms the slots carry, forced so that the tests do not depend on the tuner's table.
const char* kCarriedAlgorithms = "allgather:direct,allreduce:oneshot,alltoall:pairwise,broadcast:tree,reduce:tree";

RunOptions slotOptions() {
  RunOptions options;
  options.env["SLIMECCL_ALGO"] = kCarriedAlgorithms;
  return options;
}

// Distinct for every rank, round and element of up to 65536 elements, and larger for a larger rank.
int32_t valueOf(int rank, int round, int i) { return rank * 10000000 + round * 100000 + i; }

// Bytes a rank may publish in one op (src/exec/mailbox.h): 16 KiB on 2 ranks, 64 KiB from 3.
int slotBytes(int nranks) { return nranks <= 2 ? 16 * 1024 : 64 * 1024; }

void allReduceRound(slimecclComm_t comm, int rank, int nranks, int round, bool inPlace, int count = 5) {
  std::vector<int32_t> send(count), recv(count, -1);
  for (int i = 0; i < count; ++i) send[i] = valueOf(rank, round, i);
  if (inPlace) recv = send;
  RANK_CHECK_SUCCESS(slimecclAllReduce(inPlace ? recv.data() : send.data(), recv.data(), count, slimecclInt32,
                                       slimecclSum, comm, nullptr),
                     comm);
  for (int i = 0; i < count; ++i) {
    int32_t expected = 0;
    for (int r = 0; r < nranks; ++r) expected += valueOf(r, round, i);
    RANK_CHECK(recv[i] == expected, "round ", round, " AllReduce element ", i, ": ", recv[i], " != ", expected);
  }
}

void allGatherRound(slimecclComm_t comm, int rank, int nranks, int round, int count = 3) {
  std::vector<int32_t> send(count), recv(count * nranks, -1);
  for (int i = 0; i < count; ++i) send[i] = valueOf(rank, round, i);
  RANK_CHECK_SUCCESS(slimecclAllGather(send.data(), recv.data(), count, slimecclInt32, comm, nullptr), comm);
  for (int r = 0; r < nranks; ++r)
    for (int i = 0; i < count; ++i)
      RANK_CHECK(recv[r * count + i] == valueOf(r, round, i), "round ", round, " AllGather block ", r);
}

void broadcastRound(slimecclComm_t comm, int rank, int nranks, int round, int count = 7) {
  const int root = round % nranks;
  std::vector<int32_t> buffer(count, -1);
  if (rank == root)
    for (int i = 0; i < count; ++i) buffer[i] = valueOf(root, round, i);
  RANK_CHECK_SUCCESS(slimecclBroadcast(buffer.data(), buffer.data(), count, slimecclInt32, root, comm, nullptr), comm);
  for (int i = 0; i < count; ++i)
    RANK_CHECK(buffer[i] == valueOf(root, round, i), "round ", round, " Broadcast from ", root);
}

void reduceRound(slimecclComm_t comm, int rank, int nranks, int round, int count = 4) {
  const int root = (round + 1) % nranks;
  std::vector<int32_t> send(count), recv(count, -1);
  for (int i = 0; i < count; ++i) send[i] = valueOf(rank, round, i);
  RANK_CHECK_SUCCESS(slimecclReduce(send.data(), recv.data(), count, slimecclInt32, slimecclMax, root, comm, nullptr),
                     comm);
  if (rank != root) return;
  for (int i = 0; i < count; ++i)
    RANK_CHECK(recv[i] == valueOf(nranks - 1, round, i), "round ", round, " Reduce(max) at ", root);
}

void allToAllRound(slimecclComm_t comm, int rank, int nranks, int round, int count = 2) {
  std::vector<int32_t> send(count * nranks), recv(count * nranks, -1);
  for (int to = 0; to < nranks; ++to)
    for (int i = 0; i < count; ++i) send[to * count + i] = valueOf(rank, round, to * count + i);
  RANK_CHECK_SUCCESS(slimecclAlltoAll(send.data(), recv.data(), count, slimecclInt32, comm, nullptr), comm);
  for (int from = 0; from < nranks; ++from)
    for (int i = 0; i < count; ++i)
      RANK_CHECK(recv[from * count + i] == valueOf(from, round, rank * count + i), "round ", round,
                 " AlltoAll block from ", from);
}

// The comm's last op was `op`, and went over the slots (carried) or the net modules.
void checkLastRoute(slimecclComm_t comm, const char* op, bool carried) {
  slimecclOpRoute route;
  RANK_CHECK_SUCCESS(slimecclCommGetLastOpRoute(comm, &route), comm);
  RANK_CHECK(std::string(route.op) == op, "last op ", route.op);
  RANK_CHECK(route.route == (carried ? slimecclRouteSharedSlots : slimecclRouteNet), op, " went ", route.route);
}

class SharedSlots : public ::testing::TestWithParam<Launch> {};

TEST_P(SharedSlots, EveryCarriedCollectiveStaysRightOverManyRounds) {
  for (int nranks : {2, 3, 5}) {
    runRanks(
        GetParam(), nranks,
        [](int rank, slimecclComm_t comm) {
          const int nranks = commSize(comm);
          for (int round = 0; round < 40; ++round) {
            allReduceRound(comm, rank, nranks, round, round % 3 == 0);
            allGatherRound(comm, rank, nranks, round);
            broadcastRound(comm, rank, nranks, round);
            reduceRound(comm, rank, nranks, round);
            allToAllRound(comm, rank, nranks, round);
          }
          checkLastRoute(comm, "AlltoAll", true);
        },
        slotOptions());
  }
}

// Each carried collective with a rank's bytes filling its slot to the last byte, then one element
// more (which goes over the nets), a few rounds each so that both slots of a rank are used.
TEST_P(SharedSlots, EveryCarriedCollectiveAtTheSlotsLastByteAndPastIt) {
  for (int nranks : {2, 3, 4}) {
    runRanks(
        GetParam(), nranks,
        [](int rank, slimecclComm_t comm) {
          const int nranks = commSize(comm);
          const int fill = slotBytes(nranks) / static_cast<int>(sizeof(int32_t));
          // Pairwise AlltoAll publishes the N - 1 blocks that go to the peers.
          const int allToAllFill = fill / (nranks - 1);
          for (int extra : {0, 1})
            for (int round = 0; round < 3; ++round) {
              allReduceRound(comm, rank, nranks, round, round == 1, fill + extra);
              allGatherRound(comm, rank, nranks, round, fill + extra);
              broadcastRound(comm, rank, nranks, round, fill + extra);
              reduceRound(comm, rank, nranks, round, fill + extra);
              allToAllRound(comm, rank, nranks, round, allToAllFill + extra);
            }
        },
        slotOptions());
  }
}

TEST_P(SharedSlots, SlotCollectivesAndSendRecvInOneGroup) {
  constexpr int kRanks = 3;
  constexpr int kMessage = 16;
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        const int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
        std::vector<int32_t> out(kMessage), in(kMessage, -1);
        std::iota(out.begin(), out.end(), rank * 100);
        int32_t mine = rank + 1, sum = 0;
        std::vector<int32_t> gathered(kRanks, -1);
        auto sendRecv = [&] {
          RANK_CHECK_SUCCESS(slimecclSend(out.data(), kMessage, slimecclInt32, next, comm, nullptr), comm);
          RANK_CHECK_SUCCESS(slimecclRecv(in.data(), kMessage, slimecclInt32, prev, comm, nullptr), comm);
        };
        RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
        // Rank 0 makes its point-to-point calls first, the others last: the group runs them all
        // at once either way.
        if (rank == 0) sendRecv();
        RANK_CHECK_SUCCESS(slimecclAllReduce(&mine, &sum, 1, slimecclInt32, slimecclSum, comm, nullptr), comm);
        RANK_CHECK_SUCCESS(slimecclAllGather(&mine, gathered.data(), 1, slimecclInt32, comm, nullptr), comm);
        if (rank != 0) sendRecv();
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), nullptr);
        RANK_CHECK(sum == kRanks * (kRanks + 1) / 2, "AllReduce in the group gave ", sum);
        for (int r = 0; r < kRanks; ++r) RANK_CHECK(gathered[r] == r + 1, "AllGather in the group, block ", r);
        for (int i = 0; i < kMessage; ++i) RANK_CHECK(in[i] == prev * 100 + i, "Recv in the group, element ", i);
      },
      slotOptions());
}

TEST_P(SharedSlots, SeveralSlotCollectivesInOneGroup) {
  constexpr int kRanks = 4;
  constexpr int kCalls = 5;
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        std::vector<int64_t> send(kCalls), recv(kCalls, -1);
        for (int c = 0; c < kCalls; ++c) send[c] = (rank + 1) * (c + 1);
        RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
        for (int c = 0; c < kCalls; ++c)
          RANK_CHECK_SUCCESS(slimecclAllReduce(&send[c], &recv[c], 1, slimecclInt64, slimecclSum, comm, nullptr), comm);
        RANK_CHECK_SUCCESS(slimecclGroupEnd(), nullptr);
        for (int c = 0; c < kCalls; ++c)
          RANK_CHECK(recv[c] == int64_t{kRanks * (kRanks + 1) / 2} * (c + 1), "call ", c, " gave ", recv[c]);
      },
      slotOptions());
}

TEST_P(SharedSlots, MismatchedCountFailsOnEveryRankNamingBothCalls) {
  constexpr int kRanks = 3;
  constexpr int kOddRank = 2;
  RunOptions options = slotOptions();
  options.teardown = Teardown::kAbort;
  runRanks(
      GetParam(), kRanks,
      [](int rank, slimecclComm_t comm) {
        const size_t count = rank == kOddRank ? 5 : 4;
        std::vector<float> send(count, 1.0f), recv(count);
        RANK_CHECK_RESULT(
            slimecclInvalidUsage,
            slimecclAllReduce(send.data(), recv.data(), count, slimecclFloat32, slimecclSum, comm, nullptr), comm);
        const std::string error = lastErrorText(comm);
        RANK_CHECK(error.find("rank " + std::to_string(rank)) != std::string::npos, "no rank named: ", error);
        if (rank == kOddRank || rank == 0) {
          RANK_CHECK(error.find("AllReduce(count=4") != std::string::npos, "no count=4 call: ", error);
          RANK_CHECK(error.find("AllReduce(count=5") != std::string::npos, "no count=5 call: ", error);
        }
      },
      options);
}

// Rank 1's count puts its call one element past the slots, so it goes over the nets while the
// others' go through the slots: rank 0 and rank 1 each see the other's call announced and fail at
// once naming both; every rank fails.
TEST_P(SharedSlots, MismatchAcrossTheSlotLimitFailsAtOnceNamingBothCalls) {
  RunOptions options = slotOptions();
  options.env["SLIMECCL_TIMEOUT_MS"] = "30000";
  options.teardown = Teardown::kAbort;
  for (int nranks : {2, 3}) {
    runRanks(
        GetParam(), nranks,
        [](int rank, slimecclComm_t comm) {
          const size_t fill = slotBytes(commSize(comm)) / sizeof(int32_t);
          const size_t count = rank == 1 ? fill + 1 : fill;
          std::vector<int32_t> send(count, 1), recv(count);
          const auto start = std::chrono::steady_clock::now();
          RANK_CHECK_RESULT(
              slimecclInvalidUsage,
              slimecclAllReduce(send.data(), recv.data(), count, slimecclInt32, slimecclSum, comm, nullptr), comm);
          const auto took = std::chrono::steady_clock::now() - start;
          RANK_CHECK(took < std::chrono::seconds(10), "the mismatch took ",
                     std::chrono::duration_cast<std::chrono::milliseconds>(took).count(), " ms to show");
          if (rank > 1) return;
          const std::string error = lastErrorText(comm);
          const std::string slotsCall = "AllReduce(count=" + std::to_string(fill);
          const std::string netsCall = "AllReduce(count=" + std::to_string(fill + 1);
          RANK_CHECK(error.find(slotsCall + ",") != std::string::npos, "no ", slotsCall, " call: ", error);
          RANK_CHECK(error.find(netsCall + ",") != std::string::npos, "no ", netsCall, " call: ", error);
        },
        options);
  }
}

// A suite of its own: its 1 s timeout also bounds init, which ThreadSanitizer's slowdown can
// overrun, so CI's ThreadSanitizer stage leaves it out with the other Timeout suites.
class SharedSlotsTimeout : public ::testing::TestWithParam<Launch> {};

TEST_P(SharedSlotsTimeout, PeerThatNeverComesTimesOutNamingItsSlot) {
  constexpr int kMissingRank = 1;
  CrossRankSignal waiterDone;
  RunOptions options = slotOptions();
  options.env["SLIMECCL_TIMEOUT_MS"] = "1000";
  options.teardown = Teardown::kNone;
  runRanks(
      GetParam(), 2,
      [&](int rank, slimecclComm_t comm) {
        if (rank == kMissingRank) {
          const bool released = waiterDone.wait(1, std::chrono::seconds(30));
          RANK_CHECK_SUCCESS(slimecclCommAbort(comm), nullptr);
          RANK_CHECK(released, "rank 0 never finished");
          return;
        }
        int32_t value = 1, sum = 0;
        const slimecclResult_t result = slimecclAllReduce(&value, &sum, 1, slimecclInt32, slimecclSum, comm, nullptr);
        const std::string error = lastErrorText(comm);
        waiterDone.notify();
        RANK_CHECK(result == slimecclTimeout, "AllReduce returned ", resultName(result), ": ", error);
        RANK_CHECK(error.find("peer 1 (nothing in its shared slot for this op yet)") != std::string::npos,
                   "the peer's slot is not named: ", error);
        RANK_CHECK_SUCCESS(slimecclCommAbort(comm), nullptr);
      },
      options);
}

TEST_P(SharedSlots, SameCallsWithTheSlotsSwitchedOff) {
  RunOptions options = slotOptions();
  options.env["SLIMECCL_SHARED_SLOTS"] = "0";
  runRanks(
      GetParam(), 3,
      [](int rank, slimecclComm_t comm) {
        for (Collective collective : {Collective::kAllReduce, Collective::kAllGather, Collective::kBroadcast,
                                      Collective::kReduce, Collective::kAlltoAll})
          runCalls(collective, comm, sweepCalls(collective, commSize(comm)));
        allReduceRound(comm, rank, commSize(comm), 0, true);
        checkLastRoute(comm, "AllReduce", false);
      },
      options);
}

// With many ranks an AlltoAll's N - 1 blocks nearly fill a slot: 43 peers x 1524 bytes of 64 KiB.
TEST(SharedSlotsLimits, AlltoAllFillingASlotOnManyRanks) {
  constexpr int kRanks = 44;
  constexpr int kCount = 381;
  RunOptions options = slotOptions();
  options.deadline = std::chrono::seconds(120);
  runThreads(
      kRanks,
      [](int rank, slimecclComm_t comm) {
        std::vector<int32_t> send(kCount * kRanks), recv(kCount * kRanks, -1);
        for (int to = 0; to < kRanks; ++to)
          for (int i = 0; i < kCount; ++i) send[to * kCount + i] = rank * 1000000 + to * 1000 + i;
        RANK_CHECK_SUCCESS(slimecclAlltoAll(send.data(), recv.data(), kCount, slimecclInt32, comm, nullptr), comm);
        for (int from = 0; from < kRanks; ++from)
          for (int i = 0; i < kCount; ++i)
            RANK_CHECK(recv[from * kCount + i] == from * 1000000 + rank * 1000 + i, "block from ", from);
      },
      options);
}

// A rank that switches the slots off switches them off for the whole comm: all ranks then take
// the net path alike (a rank on the slots alone would wait for the timeout).
TEST(SharedSlotsLimits, OneRankWithoutSlotsTurnsThemOffForAll) {
  constexpr int kRanks = 3;
  RunOptions options = slotOptions();
  options.env["SLIMECCL_TIMEOUT_MS"] = "5000";
  runForkedRaw(
      kRanks,
      [](int rank, int nranks, const slimecclUniqueId& id) {
        if (rank == 1) setenv("SLIMECCL_SHARED_SLOTS", "0", 1);
        withComm(rank, nranks, id, [&](slimecclComm_t comm) {
          for (int round = 0; round < 4; ++round) {
            allReduceRound(comm, rank, nranks, round, false);
            allGatherRound(comm, rank, nranks, round);
          }
          checkLastRoute(comm, "AllGather", false);
        });
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Launches, SharedSlots,
                         ::testing::Values(Launch::kForkedShm, Launch::kThreads, Launch::kThreadsInitAll),
                         [](const ::testing::TestParamInfo<Launch>& info) { return launchName(info.param); });
INSTANTIATE_TEST_SUITE_P(Launches, SharedSlotsTimeout,
                         ::testing::Values(Launch::kForkedShm, Launch::kThreads, Launch::kThreadsInitAll),
                         [](const ::testing::TestParamInfo<Launch>& info) { return launchName(info.param); });

}  // namespace
}  // namespace slimeccl_test
