#include "src/device/broadcast_pull.h"

#include "algorithms/gpu_broadcast.h"
#include "algorithms/gpu_tuning.h"
#include "src/base/error.h"
#include "src/comm.h"
#include "src/device/op_handshake.h"
#include "src/device/reduce_kernel.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

static_assert(1 + kReduceMaxRanks <= kReduceMaxSpans, "a share's step reads the root and writes every rank");

#ifdef SLIMECCL_HAVE_CUDA

slimecclResult_t queueBroadcastPull(GpuPeers& peers, const OpRecord& op, void* stream, const char* rootSend,
                                    const std::vector<char*>& peerRecv, bool rootInPlace) {
  slimecclComm* comm = op.comm;
  const int n = comm->nranks, me = comm->rank, root = op.root;
  const size_t elem = typeSize(op.type);
  ReduceJob job;
  job.before = forKernel(exchangeOf(peers, FlagKind::CollArrived, me, n));
  job.after = forKernel(exchangeOf(peers, FlagKind::CollLanded, me, n));
  job.counters = peers.smCopyCounters();
  // The root's own output, out of place, is its kernel's local copy: written by the others, it would
  // load their links as much as the root's.
  const PullShare share = me != root     ? pullShare(op.count, elem, n, (me - root - 1 + n) % n)
                          : !rootInPlace ? PullShare{0, op.count}
                                         : PullShare{0, 0};
  if (share.count != 0) {
    const size_t at = share.offset * elem;
    ReduceStep& step = job.steps[job.stepCount++];
    step.count = share.count;
    step.sources = 1;
    job.spans[0] = reinterpret_cast<uint64_t>((me == root ? static_cast<const char*>(op.sendbuff) : rootSend) + at);
    for (int r = 0; r < n; ++r) {
      const bool written = me == root ? r == root : r != root;  // the root writes its own output alone
      if (!written) continue;
      char* recv = r == me ? static_cast<char*>(op.recvbuff) : peerRecv[r];
      job.spans[1 + step.destinations++] = reinterpret_cast<uint64_t>(recv + at);
    }
    for (int s = 0; s < 1 + step.destinations; ++s) job.spanRanks[s] = -1;
  }
  int blocks = 0;
  const int maxBlocks = comm->params.maxCtas.value_or(reductionBlocks(Coll::Broadcast, op.bytes(), n));
  const cudaError_t rc = static_cast<cudaError_t>(launchReduce(job, op.type, slimecclSum, maxBlocks, stream, &blocks));
  if (rc != cudaSuccess) return failOpStep(op, rc, "launching its broadcast kernel");
  noteGrid(comm, blocks);
  return slimecclSuccess;
}

#else

slimecclResult_t queueBroadcastPull(GpuPeers&, const OpRecord& op, void*, const char*, const std::vector<char*>&,
                                    bool) {
  return fail(slimecclInternalError, "rank {}: {}: this build has no CUDA", op.comm->rank, describeOp(op));
}

#endif

}  // namespace slimeccl
