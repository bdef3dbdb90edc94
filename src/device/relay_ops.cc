#include "src/device/relay_ops.h"

#include <algorithm>
#include <string>

#include "algorithms/relay_plan.h"
#include "src/comm.h"
#include "src/base/error.h"
#include "src/device/host_relay.h"
#include "src/device/reduce_kernel.h"
#include "src/device/stream_memops.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "src/device/copy_queue.h"
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

bool relayServesCollective(const GpuPeers& peers, const OpRecord& op, PostContents* post) {
  post->scalarBits = op.premul.bits;
  post->scalarOnDevice = op.premul.device != nullptr ? 1 : 0;
  if (op.blockListener != nullptr || op.blockConsumer != nullptr) return false;
  if (!peers.onThisGpu(readRegion(op)) || !peers.onThisGpu(writtenRegion(op))) return false;
  if (op.coll != Coll::AllReduce && op.coll != Coll::ReduceScatter && op.coll != Coll::Reduce) return true;
  const bool builtIn = op.redOp >= 0 && op.redOp < slimecclNumOps;
  return (builtIn || (op.premul.on && op.premul.device == nullptr)) && op.comm->nranks <= kReduceMaxRanks &&
         reduceKernelsLoaded(peers.device());
}

bool relayServesMessage(const GpuPeers& peers, const OpRecord& op) {
  return peers.onThisGpu(op.coll == Coll::Send ? readRegion(op) : writtenRegion(op));
}

namespace {

// The blocks of a reduction kernel over one chunk (a slot's worth, in the landing area on this GPU).
constexpr int kRelayReduceBlocks = 16;

// Queues a plan's steps on the relay's streams in the plan's order: consecutive flag writes and
// waits of one stream gather in one batch, queued before anything that follows it in the plan (on
// any stream). So where streams share one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1) they run
// in the plan's order, which never waits for a later step of a peer.
class RelayPlanQueue {
 public:
  RelayPlanQueue(GpuPeers& peers, const OpRecord& op, std::vector<char*> buffers,
                 const std::vector<PostContents>* posts, cudaStream_t caller, bool capturing)
      : peers_(peers), relay_(*peers.relay()), op_(op), buffers_(std::move(buffers)), posts_(posts), caller_(caller),
        capturing_(capturing), pending_(relay_.streams()), used_(relay_.streams(), false) {}

  slimecclResult_t run(const RelayPlan& plan) {
    const OpRecord& op = op_;
    if (plan.steps.empty()) return slimecclSuccess;
    // A plan of one stream runs on the caller's: no fork and no join.
    onCaller_ = plan.streams == 1;
    if (onCaller_) {
      for (const RelayStep& step : plan.steps) SLIMECCL_CHECK(queue(step));
      return flush(0);
    }
    cudaEvent_t fork = static_cast<cudaEvent_t>(relay_.forkEvent());
    OP_CUDA_CHECK(cudaEventRecord(fork, caller_), "forking the relay streams");
    slimecclResult_t rc = slimecclSuccess;
    for (size_t i = 0; i < plan.steps.size() && rc == slimecclSuccess; ++i) {
      const RelayStep& step = plan.steps[i];
      if (!used_[step.stream] && cudaStreamWaitEvent(stream(step.stream), fork, 0) != cudaSuccess) {
        rc = failOpStep(op, cudaGetLastError(), "forking the relay streams");
        break;
      }
      used_[step.stream] = true;
      if (last_ >= 0 && last_ != step.stream) rc = flush(last_);
      if (rc == slimecclSuccess) rc = queue(step);
      last_ = step.stream;
    }
    // Only the stream queued last still holds flag steps: the others were flushed as it took over.
    if (rc == slimecclSuccess && last_ >= 0) rc = flush(last_);
    // Every stream forked is joined back, even after a failure: a capture must end with none
    // outside it, and the op's end on the caller's stream must come after all its work.
    for (int s = 0; s < relay_.streams(); ++s) {
      if (!used_[s]) continue;
      cudaEvent_t join = static_cast<cudaEvent_t>(relay_.join(s));
      const cudaError_t joined =
          cudaEventRecord(join, stream(s)) == cudaSuccess ? cudaStreamWaitEvent(caller_, join, 0) : cudaGetLastError();
      if (rc == slimecclSuccess && joined != cudaSuccess) rc = failOpStep(op, joined, "joining the relay streams");
    }
    return rc;
  }

 private:
  cudaStream_t stream(int s) const { return onCaller_ ? caller_ : static_cast<cudaStream_t>(relay_.stream(s)); }
  char* at(const RelaySpan& span) const { return buffers_[span.buffer] + span.offset; }
  int me() const { return op_.comm->rank; }

  slimecclResult_t flush(int s) {
    const OpRecord& op = op_;
    return queueFlags(pending_[s], op, stream(s));
  }

  slimecclResult_t copy(int s, void* to, const void* from, size_t bytes, const char* what) {
    const OpRecord& op = op_;
    SLIMECCL_CHECK(flush(s));
    OP_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream(s)), what);
    return slimecclSuccess;
  }

  slimecclResult_t queue(const RelayStep& step) {
    const OpRecord& op = op_;
    const int s = step.stream;
    MemOpBatch& flags = pending_[s];
    switch (step.kind) {
      case RelayStepKind::Put:
        SLIMECCL_CHECK(copy(s, relay_.slot(step.lane, me(), step.peers.front(), step.slot), at(step.at), step.bytes,
                            "copying a chunk into the host relay"));
        for (int reader : step.peers) flags.write(peers_.peerFlag(relayFullFlag(step.lane, step.slot), reader), 1);
        return slimecclSuccess;
      case RelayStepKind::AwaitFree:
        for (int reader : step.peers) {
          const uint64_t free = peers_.ownFlag(relayFreeFlag(step.lane, step.slot), reader);
          flags.waitEquals(free, 1);
          flags.write(free, 0);
        }
        return slimecclSuccess;
      case RelayStepKind::Take: {
        const int writer = step.peers.front();
        const uint64_t full = peers_.ownFlag(relayFullFlag(step.lane, step.slot), writer);
        flags.waitEquals(full, 1);
        flags.write(full, 0);
        SLIMECCL_CHECK(copy(s, at(step.at), relay_.slot(step.lane, writer, me(), step.slot), step.bytes,
                            "copying a chunk out of the host relay"));
        flags.write(peers_.peerFlag(relayFreeFlag(step.lane, step.slot), writer), 1);
        return slimecclSuccess;
      }
      case RelayStepKind::Copy:
        SLIMECCL_CHECK(flush(s));
        return queueCopiesOn(op, stream(s), {Copy{at(step.at), at(step.from), step.bytes}}, true, capturing_);
      case RelayStepKind::Reduce: SLIMECCL_CHECK(flush(s)); return reduce(step);
      case RelayStepKind::Signal: {
        SLIMECCL_CHECK(flush(s));
        void* event = relay_.signalEvent(step.event);
        if (event == nullptr) return failOpStep(op, cudaGetLastError(), "creating an event");
        OP_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), stream(s)), "ordering the relay streams");
        return slimecclSuccess;
      }
      case RelayStepKind::Await:
        SLIMECCL_CHECK(flush(s));
        OP_CUDA_CHECK(cudaStreamWaitEvent(stream(s), static_cast<cudaEvent_t>(relay_.signalEvent(step.event)), 0),
                      "ordering the relay streams");
        return slimecclSuccess;
    }
    return slimecclSuccess;
  }

  // One kernel of one step with no handshakes: the flags around it are the stream's.
  slimecclResult_t reduce(const RelayStep& step) {
    const OpRecord& op = op_;
    const int n = op.comm->nranks;
    ReduceJob job{};
    job.counters = peers_.smCopyCounters();
    job.divisor = op.redOp == slimecclAvg ? n : 0;
    job.premul = op.premul.on;
    job.stepCount = 1;
    ReduceStep& kernelStep = job.steps[0];
    kernelStep.count = step.count;
    kernelStep.sources = static_cast<uint8_t>(step.sources.size());
    kernelStep.destinations = 1;
    int spans = 0;
    for (const RelaySource& source : step.sources) {
      job.spans[spans] = reinterpret_cast<uint64_t>(at(source.span));
      job.spanRanks[spans++] = static_cast<int8_t>(source.rank);
    }
    job.spans[spans] = reinterpret_cast<uint64_t>(at(step.at));
    job.spanRanks[spans] = -1;
    if (op.premul.on) {
      job.scalarCount = n;
      for (int r = 0; r < n; ++r) {
        job.scalarBits[r] = (*posts_)[r].scalarBits;
        job.scalarPointers[r] = 0;
      }
    }
    int blocks = 0;
    const cudaError_t rc = static_cast<cudaError_t>(launchReduce(
        job, op.type, op.redOp, std::min(kRelayReduceBlocks, op.comm->params.maxCtas.value_or(kRelayReduceBlocks)),
        stream(step.stream), &blocks));
    if (rc != cudaSuccess) return failOpStep(op, rc, "launching its reduction kernel");
    noteGrid(op.comm, blocks);
    return slimecclSuccess;
  }

  GpuPeers& peers_;
  HostRelay& relay_;
  const OpRecord& op_;
  std::vector<char*> buffers_;  // by a span's buffer number
  const std::vector<PostContents>* posts_;
  cudaStream_t caller_;
  bool capturing_;
  bool onCaller_ = false;
  int last_ = -1;  // the stream of the step queued last
  std::vector<MemOpBatch> pending_;
  std::vector<bool> used_;
};

RelayRequest relayRequestFor(const GpuPeers& peers, const OpRecord& op) {
  RelayRequest request;
  request.coll = op.coll;
  request.nranks = op.comm->nranks;
  request.rank = op.comm->rank;
  request.root = op.root;
  request.count = op.count;
  request.typeBytes = typeSize(op.type);
  request.inPlace = op.coll == Coll::AlltoAll ? op.sendbuff == op.recvbuff : isInPlace(op);
  request.slotBytes = peers.relay()->slotBytes();
  request.lanes = peers.relay()->lanes();
  return request;
}

}  // namespace

slimecclResult_t queueRelayedCollective(GpuPeers& peers, const OpRecord& op, void* stream,
                                        const std::vector<PostContents>& posts, bool capturing) {
  const RelayPlan plan = planRelay(relayRequestFor(peers, op));
  std::vector<char*> buffers{peers.relay()->landing(), static_cast<char*>(const_cast<void*>(op.sendbuff)),
                             static_cast<char*>(op.recvbuff)};
  RelayPlanQueue queue(peers, op, std::move(buffers), &posts, static_cast<cudaStream_t>(stream), capturing);
  SLIMECCL_CHECK(queue.run(plan));
  peers.relay()->setLanes(plan.lanes);
  op.comm->opsRelayed.fetch_add(1, std::memory_order_relaxed);
  return slimecclSuccess;
}

slimecclResult_t queueRelayedMessages(GpuPeers& peers, const std::vector<RelayedMessage>& messages, void* stream,
                                      bool capturing) {
  const OpRecord& op = *messages.front().op;
  RelayRequest request = relayRequestFor(peers, op);
  // A message to this rank itself is a copy within the GPU: the board matched each Send to itself
  // with a Recv of the same call, in call order, and a comm's ops in a group share one stream.
  std::vector<char*> buffers{peers.relay()->landing()};
  for (const RelayedMessage& m : messages) {
    request.messages.push_back({m.op->coll == Coll::Send, m.op->peer, m.op->bytes()});
    buffers.push_back(m.bytes);
  }
  const RelayPlan plan = planRelay(request);
  RelayPlanQueue queue(peers, op, std::move(buffers), nullptr, static_cast<cudaStream_t>(stream), capturing);
  SLIMECCL_CHECK(queue.run(plan));
  peers.relay()->setLanes(plan.lanes);
  op.comm->opsRelayed.fetch_add(messages.size(), std::memory_order_relaxed);
  return slimecclSuccess;
}

#else

slimecclResult_t queueRelayedCollective(GpuPeers&, const OpRecord&, void*, const std::vector<PostContents>&, bool) {
  return fail(slimecclInvalidUsage, "this build of slimeccl has no CUDA support");
}

slimecclResult_t queueRelayedMessages(GpuPeers&, const std::vector<RelayedMessage>&, void*, bool) {
  return fail(slimecclInvalidUsage, "this build of slimeccl has no CUDA support");
}

#endif

}  // namespace slimeccl
