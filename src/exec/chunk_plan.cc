#include "src/exec/chunk_plan.h"

#include <algorithm>

#include "src/comm.h"
#include "src/device/chunk_staging.h"
#include "src/device/device_staging.h"
#include "src/exec/chunked_run.h"

namespace slimeccl {
namespace {

constexpr size_t kAreaAlign = 256;

}  // namespace

ChunkPlan::ChunkPlan(const std::vector<OpRecord>& ops) {
  for (const OpRecord& op : ops) {
    Cut cut{&op, {}, -1, -1, false};
    if (runsThroughArena(op)) {
      cut.chunks = chunksOf(op, op.comm->chunkStaging->chunkBytes());
      cut.sendGpu = deviceOfRegion(readRegion(op));
      cut.recvGpu = deviceOfRegion(writtenRegion(op));
      cut.reachedByNet = DeviceStaging::reachedByNet(op);
    }
    rounds_ = std::max(rounds_, cut.chunks.size());
    cut_.push_back(std::move(cut));
  }
}

void countStagedChunks(const ChunkRound& round) {
  for (slimecclComm* comm : round.chunksOf) comm->stagedChunks.fetch_add(1, std::memory_order_relaxed);
}

int ChunkPlan::bayOfRound(size_t c) { return static_cast<int>(c % ChunkStaging::kBays); }

void ChunkPlan::round(size_t c, ChunkRound* round) {
  const int bay = bayOfRound(c);
  for (const Cut& cut : cut_) {
    if (cut.chunks.empty()) {
      if (c == 0) round->ops.push_back(*cut.op);
      continue;
    }
    if (c >= cut.chunks.size()) continue;
    OpRecord chunkOp;
    stageChunk(cut, cut.chunks[c], bay, partOf(round, cut.op), round, &chunkOp);
    chunkOp.seq = cut.op->seq + c;
    round->ops.push_back(chunkOp);
    round->chunksOf.push_back(cut.op->comm);
  }
}

// The op's comm's part of the round.
CommBay* ChunkPlan::partOf(ChunkRound* round, const OpRecord* op) {
  for (CommBay& s : round->bays)
    if (s.comm == op->comm) return &s;
  round->bays.push_back(CommBay{op->comm, op});
  if (std::none_of(touched_.begin(), touched_.end(), [&](const CommBay& t) { return t.comm == op->comm; }))
    touched_.push_back(round->bays.back());
  return &round->bays.back();
}

// `bytes` of the comm's bay, or of memory of the plan's own where the bay is full (a group of
// many large ops).
char* ChunkPlan::area(CommBay* s, int bay, size_t bytes, ChunkRound* round) {
  const size_t aligned = (bytes + kAreaAlign - 1) / kAreaAlign * kAreaAlign;
  ChunkStaging& staging = *s->comm->chunkStaging;
  if (s->used + aligned <= staging.bayBytes()) {
    char* at = staging.bay(bay) + s->used;
    s->used += aligned;
    return at;
  }
  round->overflowed = true;
  overflow_.emplace_back(bytes);
  return overflow_.back().data();
}

// The op of chunk `chunk` of the cut's op: its buffers are the op's own where they are host
// memory in one row (or device memory the net module reaches itself), else areas of the bay,
// filled (or, for results, emptied) by the round's copies.
void ChunkPlan::stageChunk(const Cut& cut, const OpChunk& chunk, int bay, CommBay* s, ChunkRound* round,
                           OpRecord* out) {
  const OpRecord& op = *cut.op;
  OpRecord chunkOp = op;
  chunkOp.count = chunk.count;
  const ChunkRows in = sendRows(op, chunk), result = recvRows(op, chunk);
  if (gathersOnOneGpu(cut) && result.rows != 0) {
    stageGatherInPlace(cut, in, result, bay, s, round, &chunkOp);
    *out = chunkOp;
    return;
  }
  if (in.rows == 1 && (cut.sendGpu < 0 || cut.reachedByNet)) {
    chunkOp.sendbuff = static_cast<const char*>(op.sendbuff) + in.offset;
  } else if (in.rows != 0) {
    char* staged = area(s, bay, in.bytes(), round);
    round->copiesIn.push_back(RowsCopy{&op, cut.sendGpu, staged, in});
    chunkOp.sendbuff = staged;
  }
  if (result.rows == 1 && (cut.recvGpu < 0 || cut.reachedByNet)) {
    chunkOp.recvbuff = static_cast<char*>(op.recvbuff) + result.offset;
  } else if (result.rows != 0) {
    char* staged = area(s, bay, result.bytes(), round);
    chunkOp.recvbuff = staged;
    round->copiesBack.push_back(RowsCopy{&op, cut.recvGpu, staged, result});
  }
  // A buffer the op does not use on this rank (a Broadcast's send buffer off the root, a Reduce's
  // receive buffer off it) points at the other: the chunk's op runs in place there.
  if (in.rows == 0 && result.rows != 0) chunkOp.sendbuff = chunkOp.recvbuff;
  if (result.rows == 0 && in.rows != 0 && !op.isP2P()) chunkOp.recvbuff = const_cast<void*>(chunkOp.sendbuff);
  *out = chunkOp;
}

// An AllGather whose buffers are both on one GPU stages its own block straight into its place in
// the staged output, so the chunk's op runs in place (no host copy of the block), and the block
// reaches the output on the GPU itself instead of crossing back from host memory.
bool ChunkPlan::gathersOnOneGpu(const Cut& cut) {
  return cut.op->coll == Coll::AllGather && cut.sendGpu >= 0 && cut.recvGpu == cut.sendGpu;
}

void ChunkPlan::stageGatherInPlace(const Cut& cut, const ChunkRows& in, const ChunkRows& result, int bay, CommBay* s,
                                   ChunkRound* round, OpRecord* chunkOp) {
  const OpRecord& op = *cut.op;
  const size_t rank = static_cast<size_t>(op.comm->rank);
  char* staged = area(s, bay, result.bytes(), round);
  char* stagedOwn = staged + rank * result.width;
  round->copiesIn.push_back(RowsCopy{&op, cut.sendGpu, stagedOwn, in});
  if (!isInPlace(op)) {
    char* ownRow = static_cast<char*>(op.recvbuff) + result.offset + rank * result.pitch;
    round->copiesOnGpu.push_back(
        OnGpuCopy{&op, cut.sendGpu, ownRow, static_cast<const char*>(op.sendbuff) + in.offset, in.width});
  }
  ChunkRows before = result, after = result;
  before.rows = rank;
  after.offset += (rank + 1) * result.pitch;
  after.rows = result.rows - rank - 1;
  if (before.rows != 0) round->copiesBack.push_back(RowsCopy{&op, cut.recvGpu, staged, before});
  if (after.rows != 0) round->copiesBack.push_back(RowsCopy{&op, cut.recvGpu, stagedOwn + result.width, after});
  chunkOp->sendbuff = stagedOwn;
  chunkOp->recvbuff = staged;
}

}  // namespace slimeccl
