// The rounds of a call or group whose ops run through their comms' chunk arenas
// (src/device/chunk_staging.h): round c runs chunk c of every op cut into chunks (src/exec/op_chunks.h)
// as an op of the same kind on buffers in bay c mod kBays of the op's comm's arena, and says which
// copies fill that bay before the round and empty it after. Planning copies nothing: the copies are
// issued by whoever runs the rounds, at once (src/exec/chunked_run.h) or queued ahead on a CUDA
// stream (src/exec/queued_rounds.h). Every rank cuts alike, so the rounds meet.
#pragma once

#include <deque>
#include <vector>

#include "src/exec/op_chunks.h"
#include "src/op.h"

namespace slimeccl {

// Rows of an op's buffer and their place in a bay: copied in from the send buffer before the
// round, or back to the receive buffer after it.
struct RowsCopy {
  const OpRecord* op;
  int gpu;  // where the op's buffer is (-1: host memory)
  char* staged;
  ChunkRows rows;
};

// A copy between two places of one GPU's memory, beside the copies in.
struct OnGpuCopy {
  const OpRecord* op;
  int gpu;
  char* dst;
  const char* src;
  size_t bytes;
};

// One comm's part of a round: the bay it fills, and how much of it is taken.
struct CommBay {
  slimecclComm* comm;
  const OpRecord* op;  // its first op of the round, for error sentences
  size_t used = 0;
};

struct ChunkRound {
  std::vector<OpRecord> ops;
  std::vector<RowsCopy> copiesIn;
  std::vector<OnGpuCopy> copiesOnGpu;
  std::vector<RowsCopy> copiesBack;
  std::vector<CommBay> bays;
  std::vector<slimecclComm*> chunksOf;  // the comm of each chunk's op, counted once the round runs
  bool overflowed = false;              // some comm's part did not fit its bay (areas of the plan's own memory)
};

// Counts the round's chunks on their comms (slimecclCommGetPath's stagedChunks) as it runs.
void countStagedChunks(const ChunkRound& round);

class ChunkPlan {
 public:
  // The ops of one call or group, in the order they run; they must outlive the plan.
  explicit ChunkPlan(const std::vector<OpRecord>& ops);
  ChunkPlan(const ChunkPlan&) = delete;
  ChunkPlan& operator=(const ChunkPlan&) = delete;

  size_t rounds() const { return rounds_; }
  // Round c's ops and copies. Ops the arenas do not serve run whole in the first round.
  void round(size_t c, ChunkRound* out);
  // Every comm with a part in some round planned so far.
  const std::vector<CommBay>& touched() const { return touched_; }
  static int bayOfRound(size_t c);

 private:
  struct Cut {
    const OpRecord* op;
    std::vector<OpChunk> chunks;  // empty: not cut; it runs whole in the first round
    int sendGpu, recvGpu;         // where its buffers are (-1: host memory), asked once
    bool reachedByNet;            // the net module reads or writes its device buffer itself
  };

  CommBay* partOf(ChunkRound* round, const OpRecord* op);
  char* area(CommBay* s, int bay, size_t bytes, ChunkRound* round);
  void stageChunk(const Cut& cut, const OpChunk& chunk, int bay, CommBay* s, ChunkRound* round, OpRecord* out);
  static bool gathersOnOneGpu(const Cut& cut);
  void stageGatherInPlace(const Cut& cut, const ChunkRows& in, const ChunkRows& result, int bay, CommBay* s,
                          ChunkRound* round, OpRecord* chunkOp);

  std::vector<Cut> cut_;
  size_t rounds_ = 1;
  std::vector<CommBay> touched_;
  std::deque<std::vector<char>> overflow_;  // until every copy out has landed
};

}  // namespace slimeccl
