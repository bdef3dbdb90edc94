#include "src/exec/chunked_run.h"

#include <algorithm>
#include <deque>

#include "src/comm.h"
#include "src/device/device_staging.h"
#include "src/base/error.h"
#include "src/exec/op_chunks.h"

namespace slimeccl {
namespace {

// A copy out queued after a round: the chunk's result at `staged`, to `rows` of `buffer`.
struct CopyBack {
  const OpRecord* op;
  int gpu;  // where the op's receive buffer is (-1: host memory)
  const char* staged;
  ChunkRows rows;
};

// One comm's part of a round: the bay it fills, and how much of it is taken.
struct CommBay {
  slimecclComm* comm;
  const OpRecord* op;  // its first op of the round, for error sentences
  size_t used = 0;
};

struct Round {
  std::vector<OpRecord> ops;
  std::vector<CopyBack> copiesBack;
  std::vector<CommBay> bays;
};

constexpr size_t kAreaAlign = 256;

// Whether the op may run through the arena at all: it hands no blocks to a listener or consumer
// and has no PreMulSum scalar.
bool arenaServes(const OpRecord& op) {
  return op.comm->chunkStaging != nullptr && op.blockListener == nullptr && op.blockConsumer == nullptr &&
         !op.premul.on;
}

// The GPU whose memory a region is, -1 for host memory or an empty region.
int gpuOf(Region region) {
  int device = -1;
  return region.bytes != 0 && isDeviceMemory(region.data, &device) ? device : -1;
}

class ChunkedRun {
 public:
  ChunkedRun(const std::vector<OpRecord>& ops, CopyOrder order) : order_(order) {
    for (const OpRecord& op : ops) {
      Cut cut{&op, {}, -1, -1, false};
      if (runsThroughArena(op)) {
        cut.chunks = chunksOf(op, op.comm->chunkStaging->chunkBytes());
        cut.sendGpu = gpuOf(readRegion(op));
        cut.recvGpu = gpuOf(writtenRegion(op));
        cut.reachedByNet = DeviceStaging::reachedByNet(op);
      }
      rounds_ = std::max(rounds_, cut.chunks.size());
      cut_.push_back(std::move(cut));
    }
  }
  // Whatever happened, no copy still reads or writes memory of the run once it returns.
  ~ChunkedRun() {
    for (const CommBay& s : touched_) {
      for (int bay = 0; bay < ChunkStaging::kBays; ++bay) s.comm->chunkStaging->awaitIn(bay, *s.op);
      s.comm->chunkStaging->awaitAllOut(*s.op);
    }
  }

  slimecclResult_t run(const std::function<slimecclResult_t(std::vector<OpRecord>&)>& runRound) {
    Round current, next;
    SLIMECCL_CHECK(prepare(0, &current));
    for (size_t c = 0; c < rounds_; ++c) {
      const int bay = static_cast<int>(c % ChunkStaging::kBays);
      if (c + 1 < rounds_) SLIMECCL_CHECK(prepare(c + 1, &next));
      for (const CommBay& s : current.bays) SLIMECCL_CHECK(s.comm->chunkStaging->awaitIn(bay, *s.op));
      SLIMECCL_CHECK(runRound(current.ops));
      for (const CopyBack& back : current.copiesBack)
        SLIMECCL_CHECK(
            back.op->comm->chunkStaging->copyOut(back.op->recvbuff, back.gpu, back.staged, back.rows, *back.op));
      for (const CommBay& s : current.bays) SLIMECCL_CHECK(s.comm->chunkStaging->sealOut(bay, *s.op));
      current = std::move(next);
      next = Round{};
    }
    for (const CommBay& s : touched_) SLIMECCL_CHECK(s.comm->chunkStaging->awaitAllOut(*s.op));
    return slimecclSuccess;
  }

 private:
  struct Cut {
    const OpRecord* op;
    std::vector<OpChunk> chunks;  // empty: not cut; it runs whole in the first round
    int sendGpu, recvGpu;         // where its buffers are (-1: host memory), asked once
    bool reachedByNet;            // the net module reads or writes its device buffer itself
  };

  // Round c's ops, with their copies in queued.
  slimecclResult_t prepare(size_t c, Round* round) {
    const int bay = static_cast<int>(c % ChunkStaging::kBays);
    for (const Cut& cut : cut_) {
      if (cut.chunks.empty()) {
        if (c == 0) round->ops.push_back(*cut.op);
        continue;
      }
      if (c >= cut.chunks.size()) continue;
      CommBay* s = nullptr;
      SLIMECCL_CHECK(bayOf(round, cut.op, bay, &s));
      OpRecord chunkOp;
      SLIMECCL_CHECK(stageChunk(cut, cut.chunks[c], bay, s, round, &chunkOp));
      chunkOp.seq = cut.op->seq + c;
      round->ops.push_back(chunkOp);
      cut.op->comm->stagedChunks.fetch_add(1, std::memory_order_relaxed);
    }
    for (const CommBay& s : round->bays) SLIMECCL_CHECK(s.comm->chunkStaging->sealIn(bay, *s.op));
    return slimecclSuccess;
  }

  // The op's comm's part of the round, its bay reclaimed when the comm first appears in it.
  slimecclResult_t bayOf(Round* round, const OpRecord* op, int bay, CommBay** out) {
    for (CommBay& s : round->bays) {
      if (s.comm != op->comm) continue;
      *out = &s;
      return slimecclSuccess;
    }
    SLIMECCL_CHECK(op->comm->chunkStaging->reclaim(bay, *op));
    round->bays.push_back(CommBay{op->comm, op});
    if (std::none_of(touched_.begin(), touched_.end(), [&](const CommBay& t) { return t.comm == op->comm; }))
      touched_.push_back(round->bays.back());
    *out = &round->bays.back();
    return slimecclSuccess;
  }

  // `bytes` of the comm's bay, or of memory of the run's own where the bay is full (a group of
  // many large ops).
  char* area(CommBay* s, int bay, size_t bytes) {
    const size_t aligned = (bytes + kAreaAlign - 1) / kAreaAlign * kAreaAlign;
    ChunkStaging& staging = *s->comm->chunkStaging;
    if (s->used + aligned <= staging.bayBytes()) {
      char* at = staging.bay(bay) + s->used;
      s->used += aligned;
      return at;
    }
    overflow_.emplace_back(bytes);
    return overflow_.back().data();
  }

  // The op of chunk `chunk` of the cut's op: its buffers are the op's own where they are host
  // memory in one row (or device memory the net module reaches itself), else areas of the bay,
  // filled (or, for results, copied back) by the staging.
  slimecclResult_t stageChunk(const Cut& cut, const OpChunk& chunk, int bay, CommBay* s, Round* round, OpRecord* out) {
    const OpRecord& op = *cut.op;
    OpRecord chunkOp = op;
    chunkOp.count = chunk.count;
    const ChunkRows in = sendRows(op, chunk), result = recvRows(op, chunk);
    if (gathersOnOneGpu(cut) && result.rows != 0)
      return stageGatherInPlace(cut, in, result, bay, s, round, &chunkOp, out);
    if (in.rows == 1 && (cut.sendGpu < 0 || cut.reachedByNet)) {
      chunkOp.sendbuff = static_cast<const char*>(op.sendbuff) + in.offset;
    } else if (in.rows != 0) {
      char* staged = area(s, bay, in.bytes());
      SLIMECCL_CHECK(op.comm->chunkStaging->copyIn(staged, op.sendbuff, cut.sendGpu, in, order_, op));
      chunkOp.sendbuff = staged;
    }
    if (result.rows == 1 && (cut.recvGpu < 0 || cut.reachedByNet)) {
      chunkOp.recvbuff = static_cast<char*>(op.recvbuff) + result.offset;
    } else if (result.rows != 0) {
      char* staged = area(s, bay, result.bytes());
      chunkOp.recvbuff = staged;
      round->copiesBack.push_back(CopyBack{&op, cut.recvGpu, staged, result});
    }
    // A buffer the op does not use on this rank (a Broadcast's send buffer off the root, a Reduce's
    // receive buffer off it) points at the other: the chunk's op runs in place there.
    if (in.rows == 0 && result.rows != 0) chunkOp.sendbuff = chunkOp.recvbuff;
    if (result.rows == 0 && in.rows != 0 && !op.isP2P()) chunkOp.recvbuff = const_cast<void*>(chunkOp.sendbuff);
    *out = chunkOp;
    return slimecclSuccess;
  }

  // An AllGather whose buffers are both on one GPU stages its own block straight into its place in
  // the staged output, so the chunk's op runs in place (no host copy of the block), and the block
  // reaches the output on the GPU itself instead of crossing back from host memory.
  static bool gathersOnOneGpu(const Cut& cut) {
    return cut.op->coll == Coll::AllGather && cut.sendGpu >= 0 && cut.recvGpu == cut.sendGpu;
  }

  slimecclResult_t stageGatherInPlace(const Cut& cut, const ChunkRows& in, const ChunkRows& result, int bay, CommBay* s,
                                      Round* round, OpRecord* chunkOp, OpRecord* out) {
    const OpRecord& op = *cut.op;
    ChunkStaging& staging = *op.comm->chunkStaging;
    const size_t rank = static_cast<size_t>(op.comm->rank);
    char* staged = area(s, bay, result.bytes());
    char* stagedOwn = staged + rank * result.width;
    SLIMECCL_CHECK(staging.copyIn(stagedOwn, op.sendbuff, cut.sendGpu, in, order_, op));
    if (!isInPlace(op)) {
      char* ownRow = static_cast<char*>(op.recvbuff) + result.offset + rank * result.pitch;
      SLIMECCL_CHECK(staging.copyOnGpu(ownRow, static_cast<const char*>(op.sendbuff) + in.offset, in.width, cut.sendGpu,
                                       order_, op));
    }
    ChunkRows before = result, after = result;
    before.rows = rank;
    after.offset += (rank + 1) * result.pitch;
    after.rows = result.rows - rank - 1;
    if (before.rows != 0) round->copiesBack.push_back(CopyBack{&op, cut.recvGpu, staged, before});
    if (after.rows != 0) round->copiesBack.push_back(CopyBack{&op, cut.recvGpu, stagedOwn + result.width, after});
    chunkOp->sendbuff = stagedOwn;
    chunkOp->recvbuff = staged;
    *out = *chunkOp;
    return slimecclSuccess;
  }

  CopyOrder order_;
  std::vector<Cut> cut_;
  size_t rounds_ = 1;
  std::vector<CommBay> touched_;            // every comm with a part in some round
  std::deque<std::vector<char>> overflow_;  // until every copy out has landed
};

}  // namespace

bool runsThroughArena(const OpRecord& op) {
  if (!arenaServes(op)) return false;
  size_t largest = 0;
  return DeviceStaging::needed(op) ||
         (largestBufferBytes(op, &largest) && largest > op.comm->chunkStaging->chunkBytes());
}

uint64_t sequenceNumbersOf(const OpRecord& op) {
  return arenaServes(op) ? chunkCount(op, op.comm->chunkStaging->chunkBytes()) : 1;
}

slimecclResult_t runInChunks(const std::vector<OpRecord>& ops, CopyOrder order,
                             const std::function<slimecclResult_t(std::vector<OpRecord>&)>& runRound) {
  ChunkedRun run(ops, order);
  return run.run(runRound);
}

}  // namespace slimeccl
