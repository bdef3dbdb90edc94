#include "src/exec/queued_rounds.h"

#include <algorithm>

#include "src/comm.h"
#include "src/device/chunk_staging.h"
#include "src/device/device_staging.h"
#include "src/base/error.h"
#include "src/exec/chunked_run.h"

namespace slimeccl {
namespace {

// Ops on device memory must go through their comm's pinned arena, pinned for the stream's GPU
// (the arena orders its runs by events on that stream): staging pinned for them here could wait
// for the GPU to go idle, while streams wait for groups not yet queued.
bool canQueue(const OpRecord& op, int streamDevice) {
  if (op.inputGate != nullptr || (op.premul.on && op.premul.device != nullptr)) return false;
  if (!runsThroughArena(op)) return !DeviceStaging::onDevice(op);
  const ChunkStaging& arena = *op.comm->chunkStaging;
  if (arena.pinned()) return arena.device() == streamDevice && !DeviceStaging::reachedByNet(op);
  return !DeviceStaging::onDevice(op);
}

}  // namespace

QueuedRounds::QueuedRounds(std::vector<OpRecord> ops, CudaStreamBinding& stream)
    : ops_(std::move(ops)), stream_(stream), plan_(ops_) {}

slimecclResult_t QueuedRounds::queue(std::vector<OpRecord>& ops, CudaStreamBinding& stream,
                                     std::unique_ptr<QueuedRounds>* out) {
  out->reset();
  if (!std::all_of(ops.begin(), ops.end(), [&](const OpRecord& op) { return canQueue(op, stream.device()); }))
    return slimecclSuccess;
  std::unique_ptr<QueuedRounds> queued(new QueuedRounds(std::move(ops), stream));
  // Planning queues nothing: where it cannot finish, the ops go back to the caller.
  try {
    queued->rounds_.resize(queued->plan_.rounds());
    queued->points_.reserve(queued->rounds_.size());
    for (size_t c = 0; c < queued->rounds_.size(); ++c) {
      queued->plan_.round(c, &queued->rounds_[c]);
      if (queued->rounds_[c].overflowed) {
        ops = std::move(queued->ops_);
        return slimecclSuccess;
      }
    }
  } catch (const std::exception&) {
    ops = std::move(queued->ops_);
    return slimecclSuccess;
  }
  // From the first point on, the group must reach the worker, which releases what was queued.
  slimecclResult_t rc;
  try {
    rc = queued->queueOnStream();
  } catch (const std::exception& e) {
    rc = fail(slimecclSystemError, "rank {}: {}: queuing it on its CUDA stream: {}", queued->ops_.front().comm->rank,
              describeOp(queued->ops_.front()), e.what());
  }
  if (rc != slimecclSuccess) {
    queued->failed_ = rc;
    queued->failure_ = threadError();
    // What was queued may still copy into the arenas once the worker lets it go: their next run
    // and their destruction must wait for it, as for a run queued in full.
    if (queued->copiesOnDevice()) stream.join();
    void* caller = stream.laneStream(CudaStreamBinding::Lane::Caller);
    for (const CommBay& s : queued->plan_.touched()) s.comm->chunkStaging->markLastRun(caller, *s.op);
    setError(rc, queued->failure_);
  }
  *out = std::move(queued);
  return rc;
}

// Whether the group copies anything between device memory and its arenas: then its copies in go on
// the lane In and its copies out on Out, forked from the CUDA stream, else its points on the CUDA
// stream itself.
bool QueuedRounds::copiesOnDevice() const {
  const auto onDevice = [](const RowsCopy& copy) { return copy.gpu >= 0; };
  return std::any_of(rounds_.begin(), rounds_.end(), [&](const ChunkRound& round) {
    return !round.copiesOnGpu.empty() || std::any_of(round.copiesIn.begin(), round.copiesIn.end(), onDevice) ||
           std::any_of(round.copiesBack.begin(), round.copiesBack.end(), onDevice);
  });
}

slimecclResult_t QueuedRounds::queueOnStream() {
  using Lane = CudaStreamBinding::Lane;
  // The binding's sentences name the stream's step; the group's first op names rank and op.
  const OpRecord& first = ops_.front();
  const auto named = [&](slimecclResult_t rc) {
    if (rc != slimecclSuccess) prefixThreadError(fmt::format("rank {}: {}: ", first.comm->rank, describeOp(first)));
    return rc;
  };
  void* caller = stream_.laneStream(Lane::Caller);
  for (const CommBay& s : plan_.touched()) SLIMECCL_CHECK(s.comm->chunkStaging->queueAfterLastRun(caller, *s.op));
  const bool forked = copiesOnDevice();
  const Lane in = forked ? Lane::In : Lane::Caller, out = forked ? Lane::Out : Lane::Caller;
  if (forked) SLIMECCL_CHECK(named(stream_.fork()));
  const size_t n = rounds_.size();
  const size_t ahead = ChunkStaging::kBays;
  for (size_t c = 0; c < n + ahead; ++c) {
    if (c >= ahead) {
      SLIMECCL_CHECK(named(stream_.queueWaitForRelease(out, points_[c - ahead])));
      SLIMECCL_CHECK(queueCopiesOut(c - ahead, out));
      if (forked && c < n) SLIMECCL_CHECK(named(stream_.queueBayFreed(ChunkPlan::bayOfRound(c))));
    }
    if (c < n) {
      if (forked && c >= ahead) SLIMECCL_CHECK(named(stream_.queueWaitForBay(ChunkPlan::bayOfRound(c))));
      SLIMECCL_CHECK(queueCopiesIn(c, in));
      uint32_t point = 0;
      SLIMECCL_CHECK(named(stream_.queuePoint(in, &point)));
      points_.push_back(point);
    }
  }
  if (forked) SLIMECCL_CHECK(named(stream_.join()));
  for (const CommBay& s : plan_.touched()) SLIMECCL_CHECK(s.comm->chunkStaging->markLastRun(caller, *s.op));
  return slimecclSuccess;
}

slimecclResult_t QueuedRounds::queueCopiesIn(size_t c, CudaStreamBinding::Lane lane) {
  void* cuda = stream_.laneStream(lane);
  const ChunkRound& round = rounds_[c];
  for (const RowsCopy& in : round.copiesIn)
    if (in.gpu >= 0)
      SLIMECCL_CHECK(in.op->comm->chunkStaging->queueIn(cuda, in.staged, in.op->sendbuff, in.rows, *in.op));
  for (const OnGpuCopy& copy : round.copiesOnGpu)
    SLIMECCL_CHECK(copy.op->comm->chunkStaging->queueOnGpu(cuda, copy.dst, copy.src, copy.bytes, *copy.op));
  return slimecclSuccess;
}

slimecclResult_t QueuedRounds::queueCopiesOut(size_t c, CudaStreamBinding::Lane lane) {
  void* cuda = stream_.laneStream(lane);
  for (const RowsCopy& back : rounds_[c].copiesBack)
    if (back.gpu >= 0)
      SLIMECCL_CHECK(back.op->comm->chunkStaging->queueOut(cuda, back.op->recvbuff, back.staged, back.rows, *back.op));
  return slimecclSuccess;
}

slimecclResult_t QueuedRounds::run(const std::function<slimecclResult_t(std::vector<OpRecord>&)>& runRound) {
  // Whatever happens (an error, a throw), the stream goes past every wait of the group.
  struct ReleaseAll {
    QueuedRounds& rounds;
    ~ReleaseAll() {
      if (!rounds.points_.empty()) rounds.stream_.release(rounds.points_.back());
    }
  } releaseAll{*this};
  // Where queuing failed part way, the group's ops never run.
  if (failed_ != slimecclSuccess) return setError(failed_, failure_);
  for (size_t c = 0; c < rounds_.size(); ++c) {
    ChunkRound& round = rounds_[c];
    const auto aborted = [&] {
      return std::any_of(round.ops.begin(), round.ops.end(),
                         [](const OpRecord& op) { return op.comm->aborted.load(); });
    };
    if (!stream_.awaitPoint(points_[c], aborted))
      return fail(slimecclRemoteError, "rank {}: {}: its communicator was aborted before its CUDA stream reached it",
                  round.ops.front().comm->rank, describeOp(round.ops.front()));
    // Host rows: memcpy, no CUDA call.
    for (const RowsCopy& in : round.copiesIn)
      if (in.gpu < 0)
        SLIMECCL_CHECK(
            in.op->comm->chunkStaging->copyIn(in.staged, in.op->sendbuff, -1, in.rows, CopyOrder::Unordered, *in.op));
    countStagedChunks(round);
    SLIMECCL_CHECK(runRound(round.ops));
    for (const RowsCopy& back : round.copiesBack)
      if (back.gpu < 0)
        SLIMECCL_CHECK(back.op->comm->chunkStaging->copyOut(back.op->recvbuff, -1, back.staged, back.rows, *back.op));
    stream_.release(points_[c]);
  }
  return slimecclSuccess;
}

}  // namespace slimeccl
