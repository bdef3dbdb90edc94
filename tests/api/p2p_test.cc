// Send/Recv: blocking pairs on the NULL stream, and groups in which any mix and order of sends
// and receives must complete without deadlock, matching messages to one peer in call order.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "harness.h"
#include "launch_case.h"
#include "p2p_messages.h"
#include "rank_check.h"

namespace slimeccl_test {
namespace {

void sendBytes(const GuardedBuffer& buffer, int peer, slimecclComm_t comm) {
  RANK_CHECK_SUCCESS(slimecclSend(buffer.data(), buffer.size(), slimecclInt8, peer, comm, nullptr), comm);
}

void recvBytes(GuardedBuffer& buffer, int peer, slimecclComm_t comm) {
  RANK_CHECK_SUCCESS(slimecclRecv(buffer.data(), buffer.size(), slimecclInt8, peer, comm, nullptr), comm);
}

void groupStart() { RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr); }

void groupEnd(slimecclComm_t comm) { RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm); }

class SendRecv : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(SendRecv, BlockingPairsOnNullStream) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    // Ranks pair up (0,1), (2,3), ...; with an odd count the last rank has no partner.
    const int partner = rank % 2 == 0 ? rank + 1 : rank - 1;
    if (partner >= nranks) return;
    int round = 0;
    for (size_t bytes : kMessageSizes) {
      GuardedBuffer outgoing = outgoingMessage(rank, partner, round, bytes);
      GuardedBuffer incoming(bytes);
      withContext(concat("round ", round, " (", bytes, " bytes)"), [&] {
        evenSendsFirst(
            rank, [&] { sendBytes(outgoing, partner, comm); }, [&] { recvBytes(incoming, partner, comm); });
        verifyMessage(incoming, partner, rank, round);
      });
      ++round;
    }
    // A typed message: the count is in elements, not bytes.
    std::vector<double> outgoing(1000, 0.5 + rank);
    std::vector<double> incoming(1000, -1.0);
    auto send = [&] {
      RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), outgoing.size(), slimecclFloat64, partner, comm, nullptr), comm);
    };
    auto recv = [&] {
      RANK_CHECK_SUCCESS(slimecclRecv(incoming.data(), incoming.size(), slimecclFloat64, partner, comm, nullptr), comm);
    };
    evenSendsFirst(rank, send, recv);
    RANK_CHECK(std::all_of(incoming.begin(), incoming.end(), [&](double value) { return value == 0.5 + partner; }),
               "float64 message from rank ", partner, " has wrong elements");
  });
}

TEST_P(SendRecv, GroupWithEveryPeerReceivesIssuedBeforeSends) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    std::vector<GuardedBuffer> incoming;
    std::vector<GuardedBuffer> outgoing;
    for (int peer = 0; peer < nranks; ++peer) {
      incoming.emplace_back(variedMessageBytes(peer, rank, 0));
      outgoing.push_back(outgoingMessage(rank, peer, 0, variedMessageBytes(rank, peer, 0)));
    }
    groupStart();
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer != rank) recvBytes(incoming[peer], peer, comm);
    }
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer != rank) sendBytes(outgoing[peer], peer, comm);
    }
    groupEnd(comm);
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer != rank) verifyMessage(incoming[peer], peer, rank, 0);
    }
  });
}

TEST_P(SendRecv, GroupInRandomOrderSeededPerRank) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    for (int round = 1; round <= 3; ++round) {
      std::vector<GuardedBuffer> incoming;
      std::vector<GuardedBuffer> outgoing;
      for (int peer = 0; peer < nranks; ++peer) {
        incoming.emplace_back(variedMessageBytes(peer, rank, round));
        outgoing.push_back(outgoingMessage(rank, peer, round, variedMessageBytes(rank, peer, round)));
      }
      // One send to and one receive from every rank, itself included, in an order that differs per rank.
      std::vector<std::function<void()>> calls;
      for (int peer = 0; peer < nranks; ++peer) {
        calls.push_back([&, peer] { sendBytes(outgoing[peer], peer, comm); });
        calls.push_back([&, peer] { recvBytes(incoming[peer], peer, comm); });
      }
      std::mt19937 order(static_cast<unsigned>(rank * 7919 + round));
      std::shuffle(calls.begin(), calls.end(), order);
      withContext(concat("round ", round), [&] {
        groupStart();
        for (const auto& call : calls) call();
        groupEnd(comm);
        for (int peer = 0; peer < nranks; ++peer) verifyMessage(incoming[peer], peer, rank, round);
      });
    }
  });
}

TEST_P(SendRecv, GroupMatchesMessagesToOnePeerInCallOrder) {
  constexpr int kMessagesPerPeer = 4;
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    // Equal sizes first, so only the content tells the messages apart; then sizes that differ per
    // message, so matching out of order would also be a size mismatch.
    const std::vector<std::vector<size_t>> sizeSets = {{1013, 1013, 1013, 1013}, {13, 4096, 0, 65537}};
    for (size_t set = 0; set < sizeSets.size(); ++set) {
      const std::vector<size_t>& sizes = sizeSets[set];
      auto messageIndex = [&](int message) { return static_cast<int>(set) * kMessagesPerPeer + message; };
      std::vector<std::vector<GuardedBuffer>> incoming(nranks);
      std::vector<std::vector<GuardedBuffer>> outgoing(nranks);
      for (int peer = 0; peer < nranks; ++peer) {
        for (int message = 0; message < kMessagesPerPeer; ++message) {
          incoming[peer].emplace_back(sizes[message]);
          outgoing[peer].push_back(outgoingMessage(rank, peer, messageIndex(message), sizes[message]));
        }
      }
      auto postReceives = [&] {
        for (int message = 0; message < kMessagesPerPeer; ++message) {
          for (int peer = 0; peer < nranks; ++peer) recvBytes(incoming[peer][message], peer, comm);
        }
      };
      auto postSends = [&] {
        for (int message = 0; message < kMessagesPerPeer; ++message) {
          for (int peer = 0; peer < nranks; ++peer) sendBytes(outgoing[peer][message], peer, comm);
        }
      };
      withContext(concat("size set ", set), [&] {
        groupStart();
        if (rank % 2 == 0) {
          postReceives();
          postSends();
        } else {
          postSends();
          postReceives();
        }
        groupEnd(comm);
        for (int peer = 0; peer < nranks; ++peer) {
          for (int message = 0; message < kMessagesPerPeer; ++message)
            verifyMessage(incoming[peer][message], peer, rank, messageIndex(message));
        }
      });
    }
  });
}

TEST_P(SendRecv, NestedGroupsCompleteAtTheOutermostEnd) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    // Large enough that sends cannot all complete before their receives are posted.
    constexpr size_t kBytes = (size_t{256} << 10) + 3;
    std::vector<GuardedBuffer> incoming;
    std::vector<GuardedBuffer> outgoing;
    for (int peer = 0; peer < nranks; ++peer) {
      incoming.emplace_back(kBytes);
      outgoing.push_back(outgoingMessage(rank, peer, 0, kBytes));
    }
    groupStart();
    groupStart();
    for (int peer = 0; peer < nranks; ++peer) sendBytes(outgoing[peer], peer, comm);
    groupEnd(comm);
    groupStart();
    for (int peer = 0; peer < nranks; ++peer) recvBytes(incoming[peer], peer, comm);
    groupEnd(comm);
    groupEnd(comm);
    for (int peer = 0; peer < nranks; ++peer) verifyMessage(incoming[peer], peer, rank, 0);
  });
}

TEST_P(SendRecv, SizeMismatchIsInvalidUsageOnBothSides) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  runRanks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) {
        // Rank 0 sends 10000 bytes; rank 1 expects 9216 (2304 x int32): both above the eager
        // size, so the Send waits for the receiver's descriptor and sees the mismatch too.
        std::vector<char> outgoing(10000, 'x');
        std::vector<int> incoming(2304, 0);
        slimecclResult_t result;
        if (rank == 0)
          result = slimecclSend(outgoing.data(), outgoing.size(), slimecclInt8, 1, comm, nullptr);
        else if (rank == 1)
          result = slimecclRecv(incoming.data(), incoming.size(), slimecclInt32, 0, comm, nullptr);
        else
          return;
        RANK_CHECK(result == slimecclInvalidUsage, "the ", rank == 0 ? "send" : "receive", " returned ",
                   resultName(result), "; last error: ", lastErrorText(comm));
        const std::string error = lastErrorText(comm);
        RANK_CHECK(!error.empty() && error.find("rank") != std::string::npos,
                   "slimecclGetLastError should name the ranks involved: \"", error, "\"");
      },
      options);
}

// Rank 0 sends 100 bytes, which completes once handed over (eager); rank 1 expects 64. With
// connectFirst, ranks 0 and 1 first exchange a message in a group: that makes their link, so that
// the Send and Recv go straight through the net module (src/exec/eager_p2p.h).
void eagerSizeMismatch(int rank, slimecclComm_t comm, bool connectFirst) {
  if (rank > 1) return;
  if (connectFirst) {
    GuardedBuffer outgoing = outgoingMessage(rank, 1 - rank, 0, 64);
    GuardedBuffer incoming(64);
    groupStart();
    sendBytes(outgoing, 1 - rank, comm);
    recvBytes(incoming, 1 - rank, comm);
    groupEnd(comm);
    verifyMessage(incoming, 1 - rank, rank, 0);
  }
  std::vector<char> outgoing(100, 'x');
  std::vector<int> incoming(16, 0);
  if (rank == 0) {
    RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), outgoing.size(), slimecclInt8, 1, comm, nullptr), comm);
    // The receiver failed and dropped its connections: this call fails instead of waiting.
    slimecclResult_t next = slimecclRecv(incoming.data(), 1, slimecclInt32, 1, comm, nullptr);
    RANK_CHECK(next == slimecclRemoteError || next == slimecclInvalidUsage, "the Recv after the Send returned ",
               resultName(next), "; last error: ", lastErrorText(comm));
    return;
  }
  slimecclResult_t result = slimecclRecv(incoming.data(), incoming.size(), slimecclInt32, 0, comm, nullptr);
  RANK_CHECK(result == slimecclInvalidUsage, "the receive returned ", resultName(result),
             "; last error: ", lastErrorText(comm));
  const std::string error = lastErrorText(comm);
  RANK_CHECK(error.find("rank 1") != std::string::npos && error.find("64 bytes") != std::string::npos &&
                 error.find("100 bytes") != std::string::npos,
             "slimecclGetLastError should name this rank and both calls: \"", error, "\"");
}

TEST_P(SendRecv, EagerSizeMismatchFailsAtTheReceiverAndThenAtTheSender) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  runRanks(
      GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) { eagerSizeMismatch(rank, comm, false); },
      options);
}

TEST_P(SendRecv, EagerSizeMismatchOnAConnectedLinkFailsTheSameWay) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  runRanks(
      GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) { eagerSizeMismatch(rank, comm, true); },
      options);
}

TEST_P(SendRecv, EqualBytesWithDifferentDatatypesMatch) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = commSize(comm);
    const int right = (rank + 1) % nranks;
    const int left = (rank + nranks - 1) % nranks;
    // 8 x int32 out, 32 x uint8 in: the byte counts agree, so this is a valid pair.
    GuardedBuffer outgoing = outgoingMessage(rank, right, 0, 32);
    GuardedBuffer incoming(32);
    groupStart();
    RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), 8, slimecclInt32, right, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclRecv(incoming.data(), 32, slimecclUint8, left, comm, nullptr), comm);
    groupEnd(comm);
    verifyMessage(incoming, left, rank, 0);
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, SendRecv,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                         {2, 3, 8})),
                         launchCaseName);

class SelfSendRecv : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(SelfSendRecv, InsideAGroupEverySize) {
  runRanks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    int round = 0;
    for (size_t bytes : kMessageSizes) {
      GuardedBuffer outgoing = outgoingMessage(rank, rank, round, bytes);
      GuardedBuffer incoming(bytes);
      withContext(concat(bytes, " bytes"), [&] {
        groupStart();
        sendBytes(outgoing, rank, comm);
        recvBytes(incoming, rank, comm);
        groupEnd(comm);
        verifyMessage(incoming, rank, rank, round);
      });
      ++round;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, SelfSendRecv,
                         ::testing::ValuesIn(launchCases({Launch::kForkedShm, Launch::kThreads}, {1, 3})),
                         launchCaseName);

}  // namespace
}  // namespace slimeccl_test
