#include "src/exec/chunked_run.h"

#include "src/comm.h"
#include "src/device/chunk_staging.h"
#include "src/device/device_staging.h"
#include "src/base/error.h"
#include "src/exec/chunk_plan.h"
#include "src/exec/op_chunks.h"

namespace slimeccl {
namespace {

// Whether the op may run through the arena at all: it hands no blocks to a listener or consumer
// and has no PreMulSum scalar.
bool arenaServes(const OpRecord& op) {
  return op.comm->chunkStaging != nullptr && op.blockListener == nullptr && op.blockConsumer == nullptr &&
         !op.premul.on;
}

// Runs the rounds as they are planned: the copies into round c + 1's bay are issued before round c
// runs, and its copies out after it, each bay taken back once the copies out of its last round
// have landed.
class ChunkedRun {
 public:
  ChunkedRun(const std::vector<OpRecord>& ops, CopyOrder order) : plan_(ops), order_(order) {}
  // Whatever happened, no copy still reads or writes memory of the run once it returns.
  ~ChunkedRun() {
    for (const CommBay& s : plan_.touched()) {
      for (int bay = 0; bay < ChunkStaging::kBays; ++bay) s.comm->chunkStaging->awaitIn(bay, *s.op);
      s.comm->chunkStaging->awaitAllOut(*s.op);
    }
  }

  slimecclResult_t run(const std::function<slimecclResult_t(std::vector<OpRecord>&)>& runRound) {
    ChunkRound current, next;
    SLIMECCL_CHECK(prepare(0, &current));
    for (size_t c = 0; c < plan_.rounds(); ++c) {
      const int bay = ChunkPlan::bayOfRound(c);
      if (c + 1 < plan_.rounds()) SLIMECCL_CHECK(prepare(c + 1, &next));
      for (const CommBay& s : current.bays) SLIMECCL_CHECK(s.comm->chunkStaging->awaitIn(bay, *s.op));
      countStagedChunks(current);
      SLIMECCL_CHECK(runRound(current.ops));
      for (const RowsCopy& back : current.copiesBack)
        SLIMECCL_CHECK(
            back.op->comm->chunkStaging->copyOut(back.op->recvbuff, back.gpu, back.staged, back.rows, *back.op));
      for (const CommBay& s : current.bays) SLIMECCL_CHECK(s.comm->chunkStaging->sealOut(bay, *s.op));
      current = std::move(next);
      next = ChunkRound{};
    }
    for (const CommBay& s : plan_.touched()) SLIMECCL_CHECK(s.comm->chunkStaging->awaitAllOut(*s.op));
    return slimecclSuccess;
  }

 private:
  // Plans round c, takes back its bays, and issues its copies in.
  slimecclResult_t prepare(size_t c, ChunkRound* round) {
    const int bay = ChunkPlan::bayOfRound(c);
    plan_.round(c, round);
    for (const CommBay& s : round->bays) SLIMECCL_CHECK(s.comm->chunkStaging->reclaim(bay, *s.op));
    for (const RowsCopy& in : round->copiesIn)
      SLIMECCL_CHECK(in.op->comm->chunkStaging->copyIn(in.staged, in.op->sendbuff, in.gpu, in.rows, order_, *in.op));
    for (const OnGpuCopy& copy : round->copiesOnGpu)
      SLIMECCL_CHECK(
          copy.op->comm->chunkStaging->copyOnGpu(copy.dst, copy.src, copy.bytes, copy.gpu, order_, *copy.op));
    for (const CommBay& s : round->bays) SLIMECCL_CHECK(s.comm->chunkStaging->sealIn(bay, *s.op));
    return slimecclSuccess;
  }

  ChunkPlan plan_;
  CopyOrder order_;
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
