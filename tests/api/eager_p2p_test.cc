// A blocking Send or Recv of a small message on a connected link goes straight through the net
// module as one eager message with a short header (src/exec/eager_p2p.h), alone or in a group with
// no stream (a sendrecv); a call on a stream goes through the executor. Every mix of the ways must
// carry the data, and a collective met by a Send or Recv, or a peer that never sends, must end in
// an error that says so. (A size mismatch and an abort on a connected link are in p2p_test.cc and
// comm_lifecycle_test.cc.)
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

// Alone and in a group the calls may be eager; on a stream they go through the executor.
enum class Way { kAlone, kInGroup, kOnStream };
constexpr Way kWays[] = {Way::kAlone, Way::kInGroup, Way::kOnStream};

const char* wayName(Way way) {
  return way == Way::kAlone ? "alone" : way == Way::kInGroup ? "in a group" : "on a stream";
}

// Makes one call `way` and returns when it is done.
template <typename Call>
void callWay(Way way, slimecclComm_t comm, Call&& call) {
  if (way == Way::kInGroup) RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
  slimecclStream_t stream = nullptr;
  if (way == Way::kOnStream) RANK_CHECK_SUCCESS(slimecclStreamCreate(&stream), comm);
  RANK_CHECK_SUCCESS(call(stream), comm);
  if (way == Way::kInGroup) RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
  if (stream == nullptr) return;
  RANK_CHECK_SUCCESS(slimecclStreamSynchronize(stream), comm);
  RANK_CHECK_SUCCESS(slimecclStreamDestroy(stream), comm);
}

void sendBytes(const GuardedBuffer& buffer, int peer, slimecclComm_t comm, Way way) {
  callWay(way, comm, [&](slimecclStream_t stream) {
    return slimecclSend(buffer.data(), buffer.size(), slimecclInt8, peer, comm, stream);
  });
}

void recvBytes(GuardedBuffer& buffer, int peer, slimecclComm_t comm, Way way) {
  callWay(way, comm, [&](slimecclStream_t stream) {
    return slimecclRecv(buffer.data(), buffer.size(), slimecclInt8, peer, comm, stream);
  });
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

// Every size of kEagerSizes, each in every mix of the ways on the two ranks.
void exchangeEveryMix(int rank, slimecclComm_t comm) {
  const int partner = partnerOf(rank, comm);
  if (partner < 0) return;
  int round = 0;
  // The first exchange makes the link; the calls after it may take the eager path.
  exchange(rank, partner, round++, 64, Way::kOnStream, comm);
  for (size_t bytes : kEagerSizes)
    for (Way evenWay : kWays)
      for (Way oddWay : kWays) {
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

// A group of a Send to the partner and a Recv from it, as a sendrecv makes.
void sendrecv(const void* sendbuff, void* recvbuff, size_t bytes, int partner, slimecclComm_t comm) {
  RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
  RANK_CHECK_SUCCESS(slimecclSend(sendbuff, bytes, slimecclInt8, partner, comm, nullptr), comm);
  RANK_CHECK_SUCCESS(slimecclRecv(recvbuff, bytes, slimecclInt8, partner, comm, nullptr), comm);
  RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
}

// The route, not only the data: on a connected link an 8-byte Send and Recv are eager alone and
// as a sendrecv group; on a stream, and at 64 KiB, they go through the executor over the net module.
TEST_P(EagerSendRecv, SmallCallsAloneOrGroupedTakeTheEagerPathAndTheOthersTheNet) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int partner = partnerOf(rank, comm);
    if (partner < 0) return;
    int round = 0;
    exchange(rank, partner, round++, 64, Way::kOnStream, comm);  // makes the link
    RANK_CHECK(lastRoute(comm).route == slimecclRouteNet, "a Send/Recv on a stream went ", lastRoute(comm).route);
    exchange(rank, partner, round++, 8, Way::kAlone, comm);
    slimecclOpRoute route = lastRoute(comm);
    RANK_CHECK(route.route == slimecclRouteEager, "a lone 8-byte call went ", route.route);
    RANK_CHECK(std::string(route.op) == (rank % 2 == 0 ? "Recv" : "Send"), "last op ", route.op);
    RANK_CHECK(std::string(route.algorithm).empty(), "a Send/Recv names algorithm ", route.algorithm);
    GuardedBuffer outgoing = outgoingMessage(rank, partner, round, 8);
    GuardedBuffer incoming(8);
    sendrecv(outgoing.data(), incoming.data(), 8, partner, comm);
    verifyMessage(incoming, partner, rank, round++);
    route = lastRoute(comm);
    RANK_CHECK(route.route == slimecclRouteEager, "an 8-byte sendrecv group went ", route.route);
    RANK_CHECK(std::string(route.op) == "Recv", "last op of the group ", route.op);
    exchange(rank, partner, round++, 8, Way::kOnStream, comm);
    RANK_CHECK(lastRoute(comm).route == slimecclRouteNet, "an 8-byte call on a stream went ", lastRoute(comm).route);
    exchange(rank, partner, round++, 65536, Way::kAlone, comm);
    RANK_CHECK(lastRoute(comm).route == slimecclRouteNet, "a lone 64 KiB call went ", lastRoute(comm).route);
  });
}

// In place, a sendrecv group's Recv overwrites its Send's source: the partner must still get what
// the buffer held before the call, at every eager size.
TEST_P(EagerSendRecv, AnInPlaceSendrecvGroupSendsWhatTheBufferHeldBefore) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int partner = partnerOf(rank, comm);
    if (partner < 0) return;
    int round = 0;
    exchange(rank, partner, round++, 64, Way::kOnStream, comm);  // makes the link
    for (size_t bytes : kEagerSizes) {
      GuardedBuffer buffer = outgoingMessage(rank, partner, round, bytes);
      sendrecv(buffer.data(), buffer.data(), bytes, partner, comm);
      withContext(concat(bytes, " bytes in place"), [&] { verifyMessage(buffer, partner, rank, round++); });
      const slimecclRoute_t expected = bytes <= 8192 ? slimecclRouteEager : slimecclRouteNet;
      RANK_CHECK(lastRoute(comm).route == expected, bytes, " bytes in place went ", lastRoute(comm).route);
    }
  });
}

// Two Sends to one peer in a group share its lane: they go through the executor, in call order.
TEST_P(EagerSendRecv, TwoSendsToOnePeerInAGroupArriveInCallOrder) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int partner = partnerOf(rank, comm);
    if (partner < 0) return;
    exchange(rank, partner, 0, 64, Way::kOnStream, comm);  // makes the link
    GuardedBuffer first = outgoingMessage(rank, partner, 1, 8), second = outgoingMessage(rank, partner, 2, 100);
    GuardedBuffer firstIn(8), secondIn(100);
    RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
    RANK_CHECK_SUCCESS(slimecclSend(first.data(), 8, slimecclInt8, partner, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclRecv(firstIn.data(), 8, slimecclInt8, partner, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclSend(second.data(), 100, slimecclInt8, partner, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclRecv(secondIn.data(), 100, slimecclInt8, partner, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm);
    verifyMessage(firstIn, partner, rank, 1);
    verifyMessage(secondIn, partner, rank, 2);
    RANK_CHECK(lastRoute(comm).route == slimecclRouteNet, "a group with two Sends to one peer went ",
               lastRoute(comm).route);
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

// Rank 1 receives from rank 0 (alone, or in a sendrecv group), which never sends: the receive
// times out naming its peer, and the comm has failed.
void recvFromAPeerThatNeverSends(const LaunchCase& launch, Way way) {
  constexpr int kTimeoutMs = 1500;
  CrossRankSignal receiverDone;
  RunOptions options;
  options.teardown = Teardown::kAbort;
  options.env["SLIMECCL_TIMEOUT_MS"] = std::to_string(kTimeoutMs);
  runRanks(
      launch.launch, launch.nranks,
      [&](int rank, slimecclComm_t comm) {
        if (rank > 1) return;
        exchange(rank, 1 - rank, 0, 64, Way::kOnStream, comm);
        if (rank == 0) {
          RANK_CHECK(receiverDone.wait(1, std::chrono::seconds(30)), "rank 1 never finished");
          return;
        }
        char byte = 0;
        const auto start = std::chrono::steady_clock::now();
        if (way == Way::kInGroup) RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr);
        if (way == Way::kInGroup) RANK_CHECK_SUCCESS(slimecclSend(&byte, 1, slimecclInt8, 0, comm, nullptr), comm);
        slimecclResult_t result = slimecclRecv(&byte, 1, slimecclInt8, 0, comm, nullptr);
        if (way == Way::kInGroup) result = slimecclGroupEnd();
        const auto waited = std::chrono::steady_clock::now() - start;
        receiverDone.notify();
        RANK_CHECK(result == slimecclTimeout, "the receive returned ", resultName(result),
                   "; last error: ", lastErrorText(comm));
        RANK_CHECK(waited >= std::chrono::milliseconds(kTimeoutMs - 100), "the receive gave up early");
        const std::string error = lastErrorText(comm);
        RANK_CHECK(error.find("timed out") != std::string::npos && error.find("peer 0") != std::string::npos &&
                       error.find("Recv") != std::string::npos,
                   "slimecclGetLastError should name the Recv and the peer it waited on: \"", error, "\"");
        RANK_CHECK(lastRoute(comm).route == slimecclRouteEager, "the receive went ", lastRoute(comm).route);
        // The comm failed: the next call fails at once.
        RANK_CHECK(slimecclSend(&byte, 1, slimecclInt8, 0, comm, nullptr) == slimecclTimeout,
                   "a Send on the failed communicator did not fail with its error");
      },
      options);
}

TEST_P(EagerSendRecv, RecvFromAPeerThatNeverSendsTimesOutNamingThePeer) {
  recvFromAPeerThatNeverSends(GetParam(), Way::kAlone);
}

TEST_P(EagerSendRecv, SendrecvWithAPeerThatNeverSendsTimesOutNamingThePeer) {
  recvFromAPeerThatNeverSends(GetParam(), Way::kInGroup);
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
