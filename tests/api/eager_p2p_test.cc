// A blocking Send or Recv of a small message on a connected link goes straight through the net
// module as one eager message with a short header (src/exec/eager_p2p.h); a call in a group goes
// through the executor. Every mix of the two must carry the data, and a collective met by a Send
// or Recv, or a peer that never sends, must end in an error that says so. (A size mismatch and an
// abort on a connected link are in p2p_test.cc and comm_lifecycle_test.cc.)
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cross_rank_signal.h"
#include "harness.h"
#include "launch_case.h"
#include "p2p_messages.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

// Around the largest eager message (8192 bytes) and below it.
constexpr size_t kEagerSizes[] = {1, 8, 13, 100, 4096, 8191, 8192, 8193};

enum class Way { kAlone, kInGroup };

const char* wayName(Way way) { return way == Way::kAlone ? "alone" : "in a group"; }

void sendBytes(const GuardedBuffer& buffer, int peer, slimecclComm_t comm, Way way) {
  if (way == Way::kInGroup) RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
  RANK_CHECK_SUCCESS(slimecclSend(buffer.data(), buffer.size(), slimecclInt8, peer, comm, nullptr), comm);
  if (way == Way::kInGroup) RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
}

void recvBytes(GuardedBuffer& buffer, int peer, slimecclComm_t comm, Way way) {
  if (way == Way::kInGroup) RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
  RANK_CHECK_SUCCESS(slimecclRecv(buffer.data(), buffer.size(), slimecclInt8, peer, comm, nullptr), comm);
  if (way == Way::kInGroup) RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
}

// One message each way between partners, both calls of each rank made `way`.
void exchange(int rank, int partner, int round, size_t bytes, Way way, slimecclComm_t comm) {
  GuardedBuffer outgoing = outgoingMessage(rank, partner, round, bytes);
  GuardedBuffer incoming(bytes);
  evenSendsFirst(
      rank, [&] { sendBytes(outgoing, partner, comm, way); }, [&] { recvBytes(incoming, partner, comm, way); });
  verifyMessage(incoming, partner, rank, round);
}

// Ranks pair up (0,1), (2,3), ...; -1 for the odd one out.
int partnerOf(int rank, slimecclComm_t comm) {
  const int partner = rank % 2 == 0 ? rank + 1 : rank - 1;
  return partner < commSize(comm) ? partner : -1;
}

// Every size of kEagerSizes, each in every mix of alone and grouped calls on the two ranks.
void exchangeEveryMix(int rank, slimecclComm_t comm) {
  const int partner = partnerOf(rank, comm);
  if (partner < 0) return;
  int round = 0;
  // The first exchange makes the link; the calls after it may take the eager path.
  exchange(rank, partner, round++, 64, Way::kInGroup, comm);
  for (size_t bytes : kEagerSizes)
    for (Way evenWay : {Way::kAlone, Way::kInGroup})
      for (Way oddWay : {Way::kAlone, Way::kInGroup}) {
        // Both calls of a rank go one way; its partner's go the other way or the same.
        const Way mine = rank % 2 == 0 ? evenWay : oddWay;
        withContext(concat(bytes, " bytes, even rank ", wayName(evenWay), ", odd rank ", wayName(oddWay)),
                    [&] { exchange(rank, partner, round++, bytes, mine, comm); });
      }
}

class EagerSendRecv : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(EagerSendRecv, EveryMixOfAloneAndGroupedCallsCarriesEverySize) {
  runRanks(GetParam().launch, GetParam().nranks, exchangeEveryMix);
}

slimecclOpRoute lastRoute(slimecclComm_t comm) {
  slimecclOpRoute route;
  RANK_CHECK_SUCCESS(slimecclCommGetLastOpRoute(comm, &route), comm);
  return route;
}

// The route, not only the data: on a connected link a lone 8-byte Send and Recv are eager, the
// same calls in a group and a 64 KiB one go through the executor over the net module.
TEST_P(EagerSendRecv, SmallLoneCallsTakeTheEagerPathAndTheOthersTheNet) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int partner = partnerOf(rank, comm);
    if (partner < 0) return;
    int round = 0;
    exchange(rank, partner, round++, 64, Way::kInGroup, comm);  // makes the link
    RANK_CHECK(lastRoute(comm).route == slimecclRouteNet, "a grouped Send/Recv went ", lastRoute(comm).route);
    exchange(rank, partner, round++, 8, Way::kAlone, comm);
    slimecclOpRoute route = lastRoute(comm);
    RANK_CHECK(route.route == slimecclRouteEager, "a lone 8-byte call went ", route.route);
    RANK_CHECK(std::string(route.op) == (rank % 2 == 0 ? "Recv" : "Send"), "last op ", route.op);
    RANK_CHECK(std::string(route.algorithm).empty(), "a Send/Recv names algorithm ", route.algorithm);
    exchange(rank, partner, round++, 65536, Way::kAlone, comm);
    RANK_CHECK(lastRoute(comm).route == slimecclRouteNet, "a lone 64 KiB call went ", lastRoute(comm).route);
  });
}

// With 4 KiB chunks a message of 4097-8192 bytes is eager but not whole in its header: its sender
// writes the whole descriptor and the rest as a second message, and no call takes the direct path.
TEST_P(EagerSendRecv, EveryMixCarriesEverySizeWhenChunksAreSmallerThanTheEagerSize) {
  RunOptions options;
  options.env["SLIMECCL_CHUNK_BYTES"] = "4096";
  runRanks(GetParam().launch, GetParam().nranks, exchangeEveryMix, options);
}

TEST_P(EagerSendRecv, EqualBytesOfOtherDatatypesMatchOnAConnectedLink) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int partner = partnerOf(rank, comm);
    if (partner < 0) return;
    exchange(rank, partner, 0, 64, Way::kInGroup, comm);
    // 3 x float64 out, 24 x uint8 in.
    std::vector<double> outgoing{0.5 + rank, 1.5 + rank, 2.5 + rank};
    std::vector<double> incoming(3, -1.0);
    auto send = [&] {
      RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), 3, slimecclFloat64, partner, comm, nullptr), comm);
    };
    auto recv = [&] {
      RANK_CHECK_SUCCESS(slimecclRecv(incoming.data(), 24, slimecclUint8, partner, comm, nullptr), comm);
    };
    evenSendsFirst(rank, send, recv);
    RANK_CHECK(incoming == (std::vector<double>{0.5 + partner, 1.5 + partner, 2.5 + partner}),
               "the float64 message from rank ", partner, " has wrong elements");
  });
}

TEST_P(EagerSendRecv, RecvFromAPeerThatNeverSendsTimesOutNamingThePeer) {
  constexpr int kTimeoutMs = 1500;
  CrossRankSignal receiverDone;
  RunOptions options;
  options.teardown = Teardown::kAbort;
  options.env["SLIMECCL_TIMEOUT_MS"] = std::to_string(kTimeoutMs);
  runRanks(
      GetParam().launch, GetParam().nranks,
      [&](int rank, slimecclComm_t comm) {
        if (rank > 1) return;
        exchange(rank, 1 - rank, 0, 64, Way::kInGroup, comm);
        if (rank == 0) {
          RANK_CHECK(receiverDone.wait(1, std::chrono::seconds(30)), "rank 1 never finished");
          return;
        }
        char byte = 0;
        const auto start = std::chrono::steady_clock::now();
        slimecclResult_t result = slimecclRecv(&byte, 1, slimecclInt8, 0, comm, nullptr);
        const auto waited = std::chrono::steady_clock::now() - start;
        receiverDone.notify();
        RANK_CHECK(result == slimecclTimeout, "the receive returned ", resultName(result),
                   "; last error: ", lastErrorText(comm));
        RANK_CHECK(waited >= std::chrono::milliseconds(kTimeoutMs - 100), "the receive gave up early");
        const std::string error = lastErrorText(comm);
        RANK_CHECK(error.find("timed out") != std::string::npos && error.find("peer 0") != std::string::npos,
                   "slimecclGetLastError should name the peer it waited on: \"", error, "\"");
        // The comm failed: the next call fails at once.
        RANK_CHECK(slimecclSend(&byte, 1, slimecclInt8, 0, comm, nullptr) == slimecclTimeout,
                   "a Send on the failed communicator did not fail with its error");
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Launches, EagerSendRecv,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                         {2, 3})),
                         launchCaseName);

// Over sockets (no shared slots), a collective that meets an eager Send reads its short header.
TEST(EagerSendMeetsACollective, TheCollectiveNamesBothCalls) {
  CrossRankSignal collectiveDone;
  RunOptions options;
  options.teardown = Teardown::kAbort;
  runRanks(
      Launch::kForkedSocket, 2,
      [&](int rank, slimecclComm_t comm) {
        exchange(rank, 1 - rank, 0, 64, Way::kInGroup, comm);
        std::vector<float> values(4, 1.0f);
        if (rank == 0) {
          RANK_CHECK_SUCCESS(slimecclSend(values.data(), 2, slimecclFloat32, 1, comm, nullptr), comm);
          // Closing the connections first could end the collective with a RemoteError instead.
          RANK_CHECK(collectiveDone.wait(1, std::chrono::seconds(30)), "rank 1 never finished");
          return;
        }
        slimecclResult_t result =
            slimecclAllReduce(values.data(), values.data(), values.size(), slimecclFloat32, slimecclSum, comm, nullptr);
        collectiveDone.notify();
        RANK_CHECK(result == slimecclInvalidUsage, "the AllReduce returned ", resultName(result),
                   "; last error: ", lastErrorText(comm));
        const std::string error = lastErrorText(comm);
        RANK_CHECK(error.find("AllReduce") != std::string::npos && error.find("Send(8 bytes)") != std::string::npos,
                   "slimecclGetLastError should name both calls: \"", error, "\"");
      },
      options);
}

// And the other way round: a Recv on the direct path reads a collective's whole descriptor.
TEST(EagerRecvMeetsACollective, TheRecvNamesBothCalls) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  runRanks(
      Launch::kForkedSocket, 2,
      [](int rank, slimecclComm_t comm) {
        exchange(rank, 1 - rank, 0, 64, Way::kInGroup, comm);
        std::vector<float> values(4, 1.0f);
        if (rank == 0) {
          // Rank 1 fails and drops its connections: the AllReduce fails too, instead of waiting.
          slimecclResult_t result = slimecclAllReduce(values.data(), values.data(), values.size(), slimecclFloat32,
                                                      slimecclSum, comm, nullptr);
          RANK_CHECK(result != slimecclSuccess, "the AllReduce succeeded against a Recv");
          return;
        }
        slimecclResult_t result = slimecclRecv(values.data(), 2, slimecclFloat32, 0, comm, nullptr);
        RANK_CHECK(result == slimecclInvalidUsage, "the Recv returned ", resultName(result),
                   "; last error: ", lastErrorText(comm));
        const std::string error = lastErrorText(comm);
        RANK_CHECK(error.find("AllReduce") != std::string::npos && error.find("Recv(8 bytes)") != std::string::npos,
                   "slimecclGetLastError should name both calls: \"", error, "\"");
      },
      options);
}

}  // namespace
}  // namespace slimeccl_test
