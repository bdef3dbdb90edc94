#include "src/device/broadcast_relay.h"

#include "algorithms/gpu_broadcast.h"
#include "src/base/error.h"
#include "src/comm.h"

#ifdef SLIMECCL_HAVE_CUDA
#include "src/device/copy_queue.h"
#endif

namespace slimeccl {

static_assert(kRelayMaxRounds <= kStepFlags, "each round of a relayed Broadcast needs a flag of its own");

#ifdef SLIMECCL_HAVE_CUDA

slimecclResult_t queueBroadcastRelay(GpuPeers& peers, const OpRecord& op, void* cudaStream,
                                     const std::vector<char*>& peerRecv, bool capturing) {
  cudaStream_t stream = static_cast<cudaStream_t>(cudaStream);
  const int n = op.comm->nranks, me = op.comm->rank, root = op.root;
  const size_t b = op.bytes();
  const int rounds = relayRounds(b, n);
  auto holderRank = [&](int holder) { return (root + 1 + holder) % n; };
  MemOpBatch arrived = asBatch(exchangeOf(peers, FlagKind::CollArrived, me, n));
  SLIMECCL_CHECK(queueFlags(arrived, op, stream));
  if (me == root) {
    const char* send = static_cast<const char*>(op.sendbuff);
    for (int holder = 0; holder < n - 1; ++holder) {
      SLIMECCL_CHECK(forkSide(peers, op, stream, holder));
      cudaStream_t side = static_cast<cudaStream_t>(peers.side(holder));
      const int to = holderRank(holder);
      for (int round = 0; round < rounds; ++round) {
        const RelayPiece piece = relayPiece(b, n, rounds, round, holder);
        // A copy of no bytes is refused; the flag still goes.
        if (piece.bytes != 0)
          SLIMECCL_CHECK(queueCopiesOn(op, side, {{peerRecv[to] + piece.offset, send + piece.offset, piece.bytes}},
                                       false, capturing));
        MemOpBatch told;
        told.write(peers.peerFlag(stepDoneFlag(round), to), 1);
        SLIMECCL_CHECK(queueFlags(told, op, side));
      }
    }
    if (!isInPlace(op) && b != 0)
      SLIMECCL_CHECK(queueCopiesOn(op, stream, {{static_cast<char*>(op.recvbuff), send, b}}, true, capturing));
    for (int holder = 0; holder < n - 1; ++holder) SLIMECCL_CHECK(joinSide(peers, op, stream, holder));
  } else {
    char* recv = static_cast<char*>(op.recvbuff);
    const int holder = (me - root - 1 + n) % n;
    for (int round = 0; round < rounds; ++round) {
      MemOpBatch landed;
      landed.waitEquals(peers.ownFlag(stepDoneFlag(round), root), 1);
      landed.write(peers.ownFlag(stepDoneFlag(round), root), 0);
      SLIMECCL_CHECK(queueFlags(landed, op, stream));
      const RelayPiece piece = relayPiece(b, n, rounds, round, holder);
      if (piece.bytes == 0) continue;
      std::vector<Copy> onward;
      for (int other = 0; other < n - 1; ++other)
        if (other != holder)
          onward.push_back({peerRecv[holderRank(other)] + piece.offset, recv + piece.offset, piece.bytes});
      SLIMECCL_CHECK(queueCopies(peers, op, stream, onward, 0, capturing));
    }
  }
  MemOpBatch landed = asBatch(exchangeOf(peers, FlagKind::CollLanded, me, n));
  return queueFlags(landed, op, stream);
}

#else

slimecclResult_t queueBroadcastRelay(GpuPeers&, const OpRecord& op, void*, const std::vector<char*>&, bool) {
  return fail(slimecclInternalError, "rank {}: {}: this build has no CUDA", op.comm->rank, describeOp(op));
}

#endif

}  // namespace slimeccl
