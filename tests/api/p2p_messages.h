// Point-to-point messages whose content names sender, receiver and round, so a message that
// lands in the wrong receive, or not at all, is caught.
#pragma once

#include <cstddef>

#include "buffers.h"

namespace slimeccl_test {

// Sizes used across P2P tests: empty, one byte, odd, a page, just over 64 KiB and just over 1 MiB.
inline constexpr size_t kMessageSizes[] = {0, 1, 13, 4096, 65537, (size_t{1} << 20) + 5};

// Runs a rank's send and receive of a blocking exchange with its partner in turn, the even rank
// of the pair sending first.
template <typename Send, typename Recv>
void evenSendsFirst(int rank, Send&& send, Recv&& recv) {
  if (rank % 2 == 0) {
    send();
    recv();
  } else {
    recv();
    send();
  }
}

// A size from kMessageSizes that differs between neighbouring (src, dst, round) triples.
size_t variedMessageBytes(int src, int dst, int round);

// A send buffer of `bytes` filled with the content of message (src -> dst, round).
GuardedBuffer outgoingMessage(int src, int dst, int round, size_t bytes);

// Throws RankFailure unless `received` holds exactly message (src -> dst, round) and its guards are intact.
void verifyMessage(const GuardedBuffer& received, int src, int dst, int round);

}  // namespace slimeccl_test
