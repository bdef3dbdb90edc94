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

void send_bytes(const GuardedBuffer& buffer, int peer, slimecclComm_t comm) {
  RANK_CHECK_SUCCESS(slimecclSend(buffer.data(), buffer.size(), slimecclInt8, peer, comm, nullptr), comm);
}

void recv_bytes(GuardedBuffer& buffer, int peer, slimecclComm_t comm) {
  RANK_CHECK_SUCCESS(slimecclRecv(buffer.data(), buffer.size(), slimecclInt8, peer, comm, nullptr), comm);
}

void group_start() { RANK_CHECK_SUCCESS(slimecclGroupStart(), nullptr); }

void group_end(slimecclComm_t comm) { RANK_CHECK_SUCCESS(slimecclGroupEnd(), comm); }

class SendRecv : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(SendRecv, BlockingPairsOnNullStream) {
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = comm_size(comm);
    // Ranks pair up (0,1), (2,3), ...; with an odd count the last rank has no partner.
    const int partner = rank % 2 == 0 ? rank + 1 : rank - 1;
    if (partner >= nranks) return;
    int round = 0;
    for (size_t bytes : kMessageSizes) {
      GuardedBuffer outgoing = outgoing_message(rank, partner, round, bytes);
      GuardedBuffer incoming(bytes);
      with_context(concat("round ", round, " (", bytes, " bytes)"), [&] {
        even_sends_first(
            rank, [&] { send_bytes(outgoing, partner, comm); }, [&] { recv_bytes(incoming, partner, comm); });
        verify_message(incoming, partner, rank, round);
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
    even_sends_first(rank, send, recv);
    RANK_CHECK(std::all_of(incoming.begin(), incoming.end(), [&](double value) { return value == 0.5 + partner; }),
               "float64 message from rank ", partner, " has wrong elements");
  });
}

TEST_P(SendRecv, GroupWithEveryPeerReceivesIssuedBeforeSends) {
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = comm_size(comm);
    std::vector<GuardedBuffer> incoming;
    std::vector<GuardedBuffer> outgoing;
    for (int peer = 0; peer < nranks; ++peer) {
      incoming.emplace_back(varied_message_bytes(peer, rank, 0));
      outgoing.push_back(outgoing_message(rank, peer, 0, varied_message_bytes(rank, peer, 0)));
    }
    group_start();
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer != rank) recv_bytes(incoming[peer], peer, comm);
    }
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer != rank) send_bytes(outgoing[peer], peer, comm);
    }
    group_end(comm);
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer != rank) verify_message(incoming[peer], peer, rank, 0);
    }
  });
}

TEST_P(SendRecv, GroupInRandomOrderSeededPerRank) {
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = comm_size(comm);
    for (int round = 1; round <= 3; ++round) {
      std::vector<GuardedBuffer> incoming;
      std::vector<GuardedBuffer> outgoing;
      for (int peer = 0; peer < nranks; ++peer) {
        incoming.emplace_back(varied_message_bytes(peer, rank, round));
        outgoing.push_back(outgoing_message(rank, peer, round, varied_message_bytes(rank, peer, round)));
      }
      // One send to and one receive from every rank, itself included, in an order that differs per rank.
      std::vector<std::function<void()>> calls;
      for (int peer = 0; peer < nranks; ++peer) {
        calls.push_back([&, peer] { send_bytes(outgoing[peer], peer, comm); });
        calls.push_back([&, peer] { recv_bytes(incoming[peer], peer, comm); });
      }
      std::mt19937 order(static_cast<unsigned>(rank * 7919 + round));
      std::shuffle(calls.begin(), calls.end(), order);
      with_context(concat("round ", round), [&] {
        group_start();
        for (const auto& call : calls) call();
        group_end(comm);
        for (int peer = 0; peer < nranks; ++peer) verify_message(incoming[peer], peer, rank, round);
      });
    }
  });
}

TEST_P(SendRecv, GroupMatchesMessagesToOnePeerInCallOrder) {
  constexpr int kMessagesPerPeer = 4;
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = comm_size(comm);
    // Equal sizes first, so only the content tells the messages apart; then sizes that differ per
    // message, so matching out of order would also be a size mismatch.
    const std::vector<std::vector<size_t>> size_sets = {{1013, 1013, 1013, 1013}, {13, 4096, 0, 65537}};
    for (size_t set = 0; set < size_sets.size(); ++set) {
      const std::vector<size_t>& sizes = size_sets[set];
      auto message_index = [&](int message) { return static_cast<int>(set) * kMessagesPerPeer + message; };
      std::vector<std::vector<GuardedBuffer>> incoming(nranks);
      std::vector<std::vector<GuardedBuffer>> outgoing(nranks);
      for (int peer = 0; peer < nranks; ++peer) {
        for (int message = 0; message < kMessagesPerPeer; ++message) {
          incoming[peer].emplace_back(sizes[message]);
          outgoing[peer].push_back(outgoing_message(rank, peer, message_index(message), sizes[message]));
        }
      }
      auto post_receives = [&] {
        for (int message = 0; message < kMessagesPerPeer; ++message) {
          for (int peer = 0; peer < nranks; ++peer) recv_bytes(incoming[peer][message], peer, comm);
        }
      };
      auto post_sends = [&] {
        for (int message = 0; message < kMessagesPerPeer; ++message) {
          for (int peer = 0; peer < nranks; ++peer) send_bytes(outgoing[peer][message], peer, comm);
        }
      };
      with_context(concat("size set ", set), [&] {
        group_start();
        if (rank % 2 == 0) {
          post_receives();
          post_sends();
        } else {
          post_sends();
          post_receives();
        }
        group_end(comm);
        for (int peer = 0; peer < nranks; ++peer) {
          for (int message = 0; message < kMessagesPerPeer; ++message)
            verify_message(incoming[peer][message], peer, rank, message_index(message));
        }
      });
    }
  });
}

TEST_P(SendRecv, NestedGroupsCompleteAtTheOutermostEnd) {
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = comm_size(comm);
    // Large enough that sends cannot all complete before their receives are posted.
    constexpr size_t kBytes = (size_t{256} << 10) + 3;
    std::vector<GuardedBuffer> incoming;
    std::vector<GuardedBuffer> outgoing;
    for (int peer = 0; peer < nranks; ++peer) {
      incoming.emplace_back(kBytes);
      outgoing.push_back(outgoing_message(rank, peer, 0, kBytes));
    }
    group_start();
    group_start();
    for (int peer = 0; peer < nranks; ++peer) send_bytes(outgoing[peer], peer, comm);
    group_end(comm);
    group_start();
    for (int peer = 0; peer < nranks; ++peer) recv_bytes(incoming[peer], peer, comm);
    group_end(comm);
    group_end(comm);
    for (int peer = 0; peer < nranks; ++peer) verify_message(incoming[peer], peer, rank, 0);
  });
}

TEST_P(SendRecv, SizeMismatchIsInvalidUsageOnBothSides) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  run_ranks(
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
                   result_name(result), "; last error: ", last_error_text(comm));
        const std::string error = last_error_text(comm);
        RANK_CHECK(!error.empty() && error.find("rank") != std::string::npos,
                   "slimecclGetLastError should name the ranks involved: \"", error, "\"");
      },
      options);
}

// Rank 0 sends 100 bytes, which completes once handed over (eager); rank 1 expects 64. With
// connectFirst, ranks 0 and 1 first exchange a message in a group: that makes their link, so that
// the Send and Recv go straight through the net module (src/exec/eager_p2p.h).
void eager_size_mismatch(int rank, slimecclComm_t comm, bool connectFirst) {
  if (rank > 1) return;
  if (connectFirst) {
    GuardedBuffer outgoing = outgoing_message(rank, 1 - rank, 0, 64);
    GuardedBuffer incoming(64);
    group_start();
    send_bytes(outgoing, 1 - rank, comm);
    recv_bytes(incoming, 1 - rank, comm);
    group_end(comm);
    verify_message(incoming, 1 - rank, rank, 0);
  }
  std::vector<char> outgoing(100, 'x');
  std::vector<int> incoming(16, 0);
  if (rank == 0) {
    RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), outgoing.size(), slimecclInt8, 1, comm, nullptr), comm);
    // The receiver failed and dropped its connections: this call fails instead of waiting.
    slimecclResult_t next = slimecclRecv(incoming.data(), 1, slimecclInt32, 1, comm, nullptr);
    RANK_CHECK(next == slimecclRemoteError || next == slimecclInvalidUsage, "the Recv after the Send returned ",
               result_name(next), "; last error: ", last_error_text(comm));
    return;
  }
  slimecclResult_t result = slimecclRecv(incoming.data(), incoming.size(), slimecclInt32, 0, comm, nullptr);
  RANK_CHECK(result == slimecclInvalidUsage, "the receive returned ", result_name(result),
             "; last error: ", last_error_text(comm));
  const std::string error = last_error_text(comm);
  RANK_CHECK(error.find("rank 1") != std::string::npos && error.find("64 bytes") != std::string::npos &&
                 error.find("100 bytes") != std::string::npos,
             "slimecclGetLastError should name this rank and both calls: \"", error, "\"");
}

TEST_P(SendRecv, EagerSizeMismatchFailsAtTheReceiverAndThenAtTheSender) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  run_ranks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) { eager_size_mismatch(rank, comm, false); }, options);
}

TEST_P(SendRecv, EagerSizeMismatchOnAConnectedLinkFailsTheSameWay) {
  RunOptions options;
  options.teardown = Teardown::kAbort;
  run_ranks(
      GetParam().launch, GetParam().nranks,
      [](int rank, slimecclComm_t comm) { eager_size_mismatch(rank, comm, true); }, options);
}

TEST_P(SendRecv, EqualBytesWithDifferentDatatypesMatch) {
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    const int nranks = comm_size(comm);
    const int right = (rank + 1) % nranks;
    const int left = (rank + nranks - 1) % nranks;
    // 8 x int32 out, 32 x uint8 in: the byte counts agree, so this is a valid pair.
    GuardedBuffer outgoing = outgoing_message(rank, right, 0, 32);
    GuardedBuffer incoming(32);
    group_start();
    RANK_CHECK_SUCCESS(slimecclSend(outgoing.data(), 8, slimecclInt32, right, comm, nullptr), comm);
    RANK_CHECK_SUCCESS(slimecclRecv(incoming.data(), 32, slimecclUint8, left, comm, nullptr), comm);
    group_end(comm);
    verify_message(incoming, left, rank, 0);
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, SendRecv,
                         ::testing::ValuesIn(launch_cases({Launch::kForkedShm, Launch::kForkedSocket, Launch::kThreads},
                                                          {2, 3, 8})),
                         launch_case_name);

class SelfSendRecv : public ::testing::TestWithParam<LaunchCase> {};

TEST_P(SelfSendRecv, InsideAGroupEverySize) {
  run_ranks(GetParam().launch, GetParam().nranks, [](int rank, slimecclComm_t comm) {
    int round = 0;
    for (size_t bytes : kMessageSizes) {
      GuardedBuffer outgoing = outgoing_message(rank, rank, round, bytes);
      GuardedBuffer incoming(bytes);
      with_context(concat(bytes, " bytes"), [&] {
        group_start();
        send_bytes(outgoing, rank, comm);
        recv_bytes(incoming, rank, comm);
        group_end(comm);
        verify_message(incoming, rank, rank, round);
      });
      ++round;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Launches, SelfSendRecv,
                         ::testing::ValuesIn(launch_cases({Launch::kForkedShm, Launch::kThreads}, {1, 3})),
                         launch_case_name);

}  // namespace
}  // namespace slimeccl_test
