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

#include "src/device/copy_queue.h"
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

static_assert(kReduceMaxSteps - 1 <= kStepFlags, "a reduction signals after each step but its last");

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
    case GpuReductionAlgo::TwoShotSm: comm->reductionsTwoShotSm.fetch_add(1, std::memory_order_relaxed); break;
    case GpuReductionAlgo::Ring: comm->reductionsRing.fetch_add(1, std::memory_order_relaxed); break;
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

slimecclResult_t queueReduction(GpuPeers& peers, const OpRecord& op, GpuReductionAlgo algo, void* stream,
                                const std::vector<PostContents>& posts, bool capturing) {
  slimecclComm* comm = op.comm;
  const int n = comm->nranks, me = comm->rank;
  const size_t elem = typeSize(op.type);
  const GpuReductionPlan plan = planGpuReduction({op.coll, algo, n, me, op.root, op.count, elem, isInPlace(op)});
  // Where a span of `rank`'s buffer lies in this process.
  auto locate = [&](const RankSpan& span, char** out) -> slimecclResult_t {
    char* base = nullptr;
    if (span.rank == me) {
      base = span.recv ? static_cast<char*>(op.recvbuff) : static_cast<char*>(const_cast<void*>(op.sendbuff));
    } else {
      SLIMECCL_CHECK(peers.importBuffer(span.rank, span.recv ? posts[span.rank].recv : posts[span.rank].send, capturing,
                                        op, &base));
    }
    *out = base + span.offset * elem;
    return slimecclSuccess;
  };
  const Handshake landedAll = exchangeOf(peers, FlagKind::CollLanded, me, n);
  ReduceJob job;
  job.before = forKernel(exchangeOf(peers, FlagKind::CollArrived, me, n));
  // Where copy engines gather after the kernel, the second handshake follows them on the stream.
  if (plan.gathers.empty()) job.after = forKernel(landedAll);
  job.counters = peers.smCopyCounters();
  job.divisor = op.redOp == slimecclAvg ? n : 0;
  job.premul = op.premul.on;
  bool inputRead[kReduceMaxRanks] = {};
  int spans = 0;
  auto addSpan = [&](const RankSpan& span, bool source) -> slimecclResult_t {
    char* at = nullptr;
    SLIMECCL_CHECK(locate(span, &at));
    job.spans[spans] = reinterpret_cast<uint64_t>(at);
    job.spanRanks[spans++] = static_cast<int8_t>(source && !span.recv ? span.rank : -1);
    if (source && !span.recv) inputRead[span.rank] = true;
    return slimecclSuccess;
  };
  for (const GpuReductionStep& step : plan.steps) {
    ReduceStep& kernelStep = job.steps[job.stepCount++];
    kernelStep.firstSpan = static_cast<uint8_t>(spans);
    if (step.count == 0) continue;
    kernelStep.count = step.count;
    kernelStep.sources = static_cast<uint8_t>(step.sources.size());
    kernelStep.destinations = static_cast<uint8_t>(step.destinations.size());
    for (const RankSpan& span : step.sources) SLIMECCL_CHECK(addSpan(span, true));
    for (const RankSpan& span : step.destinations) SLIMECCL_CHECK(addSpan(span, false));
  }
  for (int k = 0; k + 1 < job.stepCount; ++k) {
    job.stepSignals[k] = plan.signals >= 0 ? peers.peerFlag(stepDoneFlag(k), plan.signals) : 0;
    job.stepWaits[k + 1] = plan.waitsFor >= 0 ? peers.ownFlag(stepDoneFlag(k), plan.waitsFor) : 0;
  }
  if (op.premul.on) {
    job.scalarCount = n;
    for (int r = 0; r < n; ++r) {
      job.scalarBits[r] = posts[r].scalarBits;
      job.scalarPointers[r] = 0;
      if (posts[r].scalarOnDevice == 0 || !inputRead[r]) continue;
      char* mapped = static_cast<char*>(const_cast<void*>(op.premul.device));
      if (r != me) SLIMECCL_CHECK(peers.importBuffer(r, posts[r].scalar, capturing, op, &mapped));
      job.scalarPointers[r] = reinterpret_cast<uint64_t>(mapped);
    }
  }
  int blocks = 0;
  const cudaError_t rc = static_cast<cudaError_t>(launchReduce(
      job, op.type, op.redOp, comm->params.maxCtas.value_or(reductionBlocks(op.coll, op.bytes(), n)), stream, &blocks));
  if (rc != cudaSuccess) return failOpStep(op, rc, "launching its reduction kernel");
  noteGrid(comm, blocks);
  countAlgo(comm, algo);
  if (plan.gathers.empty()) return slimecclSuccess;
  std::vector<Copy> copies;
  for (const GatherCopy& g : plan.gathers) {
    char *to = nullptr, *from = nullptr;
    SLIMECCL_CHECK(locate(g.to, &to));
    SLIMECCL_CHECK(locate(g.from, &from));
    copies.push_back({to, from, g.count * elem});
  }
  const cudaStream_t cuda = static_cast<cudaStream_t>(stream);
  SLIMECCL_CHECK(queueCopies(peers, op, cuda, copies, 0, capturing));
  MemOpBatch landed = asBatch(landedAll);
  return queueFlags(landed, op, cuda);
}

#endif

}  // namespace slimeccl
