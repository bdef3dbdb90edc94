#include "src/device/overlapped_allgather.h"

#include "src/comm.h"
#include "src/base/error.h"
#include "src/exec/block_consumer.h"

#ifdef SLIMECCL_HAVE_CUDA
#include "src/device/copy_queue.h"
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

slimecclResult_t queueOverlappedAllGather(GpuPeers& peers, const OpRecord& op, void* cudaStream,
                                          const std::vector<char*>& peerRecv, bool capturing) {
  cudaStream_t stream = static_cast<cudaStream_t>(cudaStream);
  const int n = op.comm->nranks, me = op.comm->rank;
  const size_t b = op.bytes();
  char* recv = static_cast<char*>(op.recvbuff);
  const bool inPlace = isInPlace(op);
  const char* mine = inPlace ? recv + me * b : static_cast<const char*>(op.sendbuff);
  BlockConsumer& consumer = *op.blockConsumer;
  // An empty block moves nothing (a copy of no bytes is refused), but its flags still go.
  const bool localCopy = !inPlace && b != 0 && consumer.needsOwnBlockInRecv();
  // The peers' copies on the last side stream, the local copy (out of place) on the first: there
  // are at least two. Both fork from the caller's stream before the own block's work is queued, so
  // they need not wait for it; that work is queued before the copies' flag waits, so that queuing
  // it never waits on the peers (CUDA may load a kernel lazily, and a load may wait for the GPU).
  const int pushSide = peers.sideStreams() - 1;
  SLIMECCL_CHECK(forkSide(peers, op, stream, pushSide));
  if (localCopy) SLIMECCL_CHECK(forkSide(peers, op, stream, 0));
  SLIMECCL_CHECK(consumer.hand(me, mine, stream));
  if (localCopy) {
    SLIMECCL_CHECK(
        queueCopiesOn(op, static_cast<cudaStream_t>(peers.side(0)), {{recv + me * b, mine, b}}, true, capturing));
    // The own block is in place in recv before any later block is handed.
    SLIMECCL_CHECK(joinSide(peers, op, stream, 0));
  }
  cudaStream_t pushes = static_cast<cudaStream_t>(peers.side(pushSide));
  MemOpBatch arrived = asBatch(exchangeOf(peers, FlagKind::CollArrived, me, n));
  SLIMECCL_CHECK(queueFlags(arrived, op, pushes));
  for (int k = 1; k < n; ++k) {
    const int to = (me + k) % n;
    if (b != 0) SLIMECCL_CHECK(queueCopiesOn(op, pushes, {{peerRecv[to] + me * b, mine, b}}, false, capturing));
    MemOpBatch landed;
    landed.write(peers.peerFlag(FlagKind::CollLanded, to), 1);
    SLIMECCL_CHECK(queueFlags(landed, op, pushes));
  }
  for (int k = 1; k < n; ++k) {
    const int from = (me - k + n) % n;
    MemOpBatch landed;
    landed.waitEquals(peers.ownFlag(FlagKind::CollLanded, from), 1);
    landed.write(peers.ownFlag(FlagKind::CollLanded, from), 0);
    SLIMECCL_CHECK(queueFlags(landed, op, stream));
    SLIMECCL_CHECK(consumer.hand(from, recv + from * b, stream));
  }
  SLIMECCL_CHECK(joinSide(peers, op, stream, pushSide));
  op.comm->overlapAllGathers.fetch_add(1, std::memory_order_relaxed);
  return slimecclSuccess;
}

#else

slimecclResult_t queueOverlappedAllGather(GpuPeers&, const OpRecord& op, void*, const std::vector<char*>&, bool) {
  return fail(slimecclInternalError, "rank {}: {}: this build has no CUDA", op.comm->rank, describeOp(op));
}

#endif

}  // namespace slimeccl
