#include "src/device/gpu_reductions.h"

#include <algorithm>
#include <string>

#include "algorithms/gpu_tuning.h"
#include "src/comm.h"
#include "src/device/gpu.h"
#include "src/device/op_handshake.h"
#include "src/device/reduce_kernel.h"
#include "src/base/error.h"
#include "src/base/log.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

bool isGpuReduction(const OpRecord& op) {
  return op.coll == Coll::AllReduce || op.coll == Coll::ReduceScatter || op.coll == Coll::Reduce;
}

GpuReductionAlgo gpuReductionAlgoFor(const OpRecord& op, const std::vector<PostContents>& posts) {
  bool anyInPlace = false;
  for (const PostContents& post : posts) anyInPlace = anyInPlace || post.inPlace != 0;
  const uint8_t forced = posts[0].forcedAlgo;
  if (forced != kNoForcedAlgo && gpuReductionAlgoFits(op.coll, static_cast<GpuReductionAlgo>(forced), anyInPlace))
    return static_cast<GpuReductionAlgo>(forced);
  return tuneGpuReduction(op.coll, op.bytes(), op.comm->nranks, anyInPlace);
}

#ifdef SLIMECCL_HAVE_CUDA

namespace {

// The rank's send buffer (its whole input) and receive buffer, as the op reads and writes them.
Region sendRegion(const OpRecord& op) {
  const size_t inputs = op.coll == Coll::ReduceScatter ? static_cast<size_t>(op.comm->nranks) : 1;
  return Region{static_cast<char*>(const_cast<void*>(op.sendbuff)), op.bytes() * inputs};
}
Region recvRegion(const OpRecord& op) { return Region{static_cast<char*>(op.recvbuff), op.bytes()}; }

bool writesOutput(const OpRecord& op) { return op.coll != Coll::Reduce || op.comm->rank == op.root; }

void countAlgo(slimecclComm* comm, GpuReductionAlgo algo) {
  switch (algo) {
    case GpuReductionAlgo::OneShot: comm->reductionsOneShot.fetch_add(1, std::memory_order_relaxed); break;
    case GpuReductionAlgo::TwoShot: comm->reductionsTwoShot.fetch_add(1, std::memory_order_relaxed); break;
    case GpuReductionAlgo::Direct: comm->reductionsDirect.fetch_add(1, std::memory_order_relaxed); break;
  }
}

}  // namespace

bool reductionOnGpu(GpuPeers& peers, const OpRecord& op, PostContents* post) {
  const bool builtIn = op.redOp >= 0 && op.redOp < slimecclNumOps;
  if (!(builtIn || op.premul.on) || op.comm->nranks > kReduceMaxRanks || !peers.reduceUsable()) return false;
  std::string why;
  post->inPlace = isInPlace(op) ? 1 : 0;
  GpuReductionAlgo forced;
  const std::string& name = op.comm->params.gpuReduceAlgo;
  post->forcedAlgo =
      !name.empty() && parseGpuReductionAlgo(name.c_str(), &forced) ? static_cast<uint8_t>(forced) : kNoForcedAlgo;
  post->scalarOnDevice = op.premul.device != nullptr ? 1 : 0;
  post->scalarBits = op.premul.bits;
  if (op.premul.device != nullptr &&
      !(peers.onThisGpu(Region{static_cast<const char*>(op.premul.device), typeSize(op.type)}) &&
        peers.exportBuffer(op.premul.device, typeSize(op.type), &post->scalar, &why)))
    return false;
  const Region send = sendRegion(op), recv = recvRegion(op);
  if (!peers.onThisGpu(send) || !peers.exportBuffer(send.data, send.bytes, &post->send, &why)) return false;
  if (!writesOutput(op)) return true;
  return peers.onThisGpu(recv) && peers.exportBuffer(recv.data, recv.bytes, &post->recv, &why);
}

slimecclResult_t queueReduction(GpuPeers& peers, const OpRecord& op, void* stream,
                                const std::vector<PostContents>& posts, bool capturing) {
  slimecclComm* comm = op.comm;
  const int n = comm->nranks, me = comm->rank;
  const GpuReductionAlgo algo = gpuReductionAlgoFor(op, posts);
  const GpuReductionPlan plan =
      planGpuReduction({op.coll, algo, n, me, op.root, op.count, typeSize(op.type), isInPlace(op)});
  // Where a span of `rank`'s buffer lies in this process.
  auto locate = [&](const RankSpan& span, uint64_t* out) -> slimecclResult_t {
    char* base = nullptr;
    if (span.rank == me) {
      base = span.recv ? static_cast<char*>(op.recvbuff) : static_cast<char*>(const_cast<void*>(op.sendbuff));
    } else {
      SLIMECCL_CHECK(peers.importBuffer(span.rank, span.recv ? posts[span.rank].recv : posts[span.rank].send, capturing,
                                        op, &base));
    }
    *out = reinterpret_cast<uint64_t>(base + span.offset * typeSize(op.type));
    return slimecclSuccess;
  };
  ReduceJob job;
  job.before = forKernel(exchangeOf(peers, FlagKind::CollArrived, me, n));
  job.after = forKernel(exchangeOf(peers, FlagKind::CollLanded, me, n));
  job.counters = peers.smCopyCounters();
  job.count = plan.count;
  job.divisor = op.redOp == slimecclAvg ? n : 0;
  job.premul = op.premul.on;
  if (plan.count != 0) {
    for (const RankSpan& span : plan.sources) {
      if (op.premul.on) {
        const PostContents& theirs = posts[span.rank];
        job.scalarBits[job.sourceCount] = theirs.scalarBits;
        if (theirs.scalarOnDevice == 0) {
          job.scalarPointers[job.sourceCount] = 0;
        } else if (span.rank == me) {
          job.scalarPointers[job.sourceCount] = reinterpret_cast<uint64_t>(op.premul.device);
        } else {
          char* mapped = nullptr;
          SLIMECCL_CHECK(peers.importBuffer(span.rank, theirs.scalar, capturing, op, &mapped));
          job.scalarPointers[job.sourceCount] = reinterpret_cast<uint64_t>(mapped);
        }
      }
      SLIMECCL_CHECK(locate(span, &job.sources[job.sourceCount++]));
    }
    for (const RankSpan& span : plan.destinations)
      SLIMECCL_CHECK(locate(span, &job.destinations[job.destinationCount++]));
  }
  int blocks = 0;
  const cudaError_t rc = static_cast<cudaError_t>(launchReduce(
      job, op.type, op.redOp, comm->params.maxCtas.value_or(reductionBlocks(op.coll, op.bytes(), n)), stream, &blocks));
  if (rc != cudaSuccess) return failOpStep(op, rc, "launching its reduction kernel");
  noteGrid(comm, blocks);
  countAlgo(comm, algo);
  return slimecclSuccess;
}

#endif

}  // namespace slimeccl
