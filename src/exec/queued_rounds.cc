#include "src/exec/queued_rounds.h"

#include <algorithm>

#include "src/comm.h"
#include "src/device/chunk_staging.h"
#include "src/device/device_staging.h"
#include "src/base/error.h"
#include "src/exec/chunked_run.h"

namespace slimeccl {
namespace {

constexpr size_t kAreaAlign = 256;

// Ops on device memory go through their comm's pinned arena in chunks, or else whole through the
// stream's pinned staging.
bool canQueue(const OpRecord& op) {
  if (op.inputGate != nullptr || (op.premul.on && op.premul.device != nullptr)) return false;
  if (!DeviceStaging::onDevice(op)) return true;
  if (DeviceStaging::reachedByNet(op)) return false;
  return !runsThroughArena(op) || op.comm->chunkStaging->pinned();
}

}  // namespace

QueuedRounds::QueuedRounds(std::vector<OpRecord> ops, CudaStreamBinding& stream)
    : ops_(std::move(ops)), stream_(stream), plan_(ops_) {}

slimecclResult_t QueuedRounds::queue(std::vector<OpRecord>& ops, CudaStreamBinding& stream,
                                     std::unique_ptr<QueuedRounds>* out) {
  out->reset();
  if (!std::all_of(ops.begin(), ops.end(), canQueue)) return slimecclSuccess;
  std::unique_ptr<QueuedRounds> queued(new QueuedRounds(std::move(ops), stream));
  queued->rounds_.resize(queued->plan_.rounds());
  for (size_t c = 0; c < queued->rounds_.size(); ++c) {
    queued->plan_.round(c, &queued->rounds_[c]);
    if (queued->rounds_[c].overflowed) {
      ops = std::move(queued->ops_);
      return slimecclSuccess;
    }
  }
  slimecclResult_t rc = queued->stageWholeOps();
  if (rc == slimecclSuccess) rc = queued->queueOnStream();
  if (rc != slimecclSuccess) {
    queued->failed_ = rc;
    queued->failure_ = threadError();
  }
  *out = std::move(queued);
  return rc;
}

slimecclResult_t QueuedRounds::stageWholeOps() {
  ChunkRound& first = rounds_.front();
  struct Staged {
    OpRecord* op;
    StagingSpan span;
    size_t offset;
  };
  std::vector<Staged> staged;
  size_t bytes = 0;
  for (size_t i : first.wholeOps) {
    OpRecord& op = first.ops[i];
    const Region read = readRegion(op), written = writtenRegion(op);
    const std::vector<StagingSpan> spans = stagingSpans(read, deviceOfRegion(read), written, deviceOfRegion(written));
    if (!spans.empty()) op.comm->opsStaged.fetch_add(1, std::memory_order_relaxed);
    for (const StagingSpan& span : spans) {
      staged.push_back(Staged{&op, span, bytes});
      bytes += (span.bytes + kAreaAlign - 1) / kAreaAlign * kAreaAlign;
    }
  }
  if (staged.empty()) return slimecclSuccess;
  char* area = nullptr;
  if (const slimecclResult_t rc = stream_.wholeOpStaging(bytes, &area); rc != slimecclSuccess) {
    prefixThreadError(fmt::format("rank {}: {}: ", staged.front().op->comm->rank, describeOp(*staged.front().op)));
    return rc;
  }
  for (const Staged& s : staged) {
    char* host = area + s.offset;
    if (s.span.inBytes > 0)
      wholeIn_.push_back(WholeCopy{host + s.span.inOffset, s.span.memory + s.span.inOffset, s.span.inBytes});
    if (s.span.outBytes > 0)
      wholeOut_.push_back(
          WholeCopy{const_cast<char*>(s.span.memory) + s.span.outOffset, host + s.span.outOffset, s.span.outBytes});
    repointInto(*s.op, s.span, host);
  }
  return slimecclSuccess;
}

slimecclResult_t QueuedRounds::queueOnStream() {
  void* cuda = stream_.queueStream();
  for (const CommBay& s : plan_.touched()) SLIMECCL_CHECK(s.comm->chunkStaging->queueAfterLastRun(cuda, *s.op));
  const size_t n = rounds_.size();
  const size_t ahead = ChunkStaging::kBays;
  for (size_t c = 0; c < n + ahead; ++c) {
    if (c >= ahead) {
      SLIMECCL_CHECK(stream_.queueWaitForRelease(points_[c - ahead]));
      SLIMECCL_CHECK(queueCopiesOut(c - ahead));
    }
    if (c < n) {
      SLIMECCL_CHECK(queueCopiesIn(c));
      uint32_t point = 0;
      SLIMECCL_CHECK(stream_.queuePoint(&point));
      points_.push_back(point);
    }
  }
  for (const CommBay& s : plan_.touched()) SLIMECCL_CHECK(s.comm->chunkStaging->markLastRun(cuda, *s.op));
  return slimecclSuccess;
}

slimecclResult_t QueuedRounds::queueCopiesIn(size_t c) {
  void* cuda = stream_.queueStream();
  const ChunkRound& round = rounds_[c];
  for (const RowsCopy& in : round.copiesIn)
    if (in.gpu >= 0)
      SLIMECCL_CHECK(in.op->comm->chunkStaging->queueIn(cuda, in.staged, in.op->sendbuff, in.rows, *in.op));
  for (const OnGpuCopy& copy : round.copiesOnGpu)
    SLIMECCL_CHECK(copy.op->comm->chunkStaging->queueOnGpu(cuda, copy.dst, copy.src, copy.bytes, *copy.op));
  if (c == 0)
    for (const WholeCopy& copy : wholeIn_) SLIMECCL_CHECK(stream_.queueCopy(copy.dst, copy.src, copy.bytes));
  return slimecclSuccess;
}

slimecclResult_t QueuedRounds::queueCopiesOut(size_t c) {
  void* cuda = stream_.queueStream();
  for (const RowsCopy& back : rounds_[c].copiesBack)
    if (back.gpu >= 0)
      SLIMECCL_CHECK(back.op->comm->chunkStaging->queueOut(cuda, back.op->recvbuff, back.staged, back.rows, *back.op));
  if (c == 0)
    for (const WholeCopy& copy : wholeOut_) SLIMECCL_CHECK(stream_.queueCopy(copy.dst, copy.src, copy.bytes));
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
    stream_.awaitPoint(points_[c]);
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
