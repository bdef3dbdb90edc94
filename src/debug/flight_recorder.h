// The flight recorder: per communicator, the last ops with their state and, for an op that is
// running, which peers it waits on and how many bytes have moved. Printed on a timeout and when
// the signal named by SLIMECCL_DEBUG_DUMP arrives (docs/debugging.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "src/op.h"
#include "src/base/util/spin_lock.h"

namespace slimeccl {

struct OpPlan;

// OnGpu: queued on its CUDA stream GPU to GPU, where the host's part of it ends (the GPU's watchdog,
// not the recorder, follows it from there).
enum class OpState { Queued, Running, Done, Failed, OnGpu };

// What an entry keeps of its op: what describes it (describeOp) and what finds it again. Not the
// whole OpRecord: copying that costs a small op measurably, and its hooks would keep alive what
// belongs to the call.
struct FlightOp {
  Coll coll = Coll::AllGather;
  slimecclDataType_t type = slimecclInt8;
  int peer = -1;
  size_t count = 0;
  uint64_t seq = 0;
  uint64_t traceId = 0;

  std::string describe() const;
};

struct FlightEntry {
  FlightOp op;
  OpState state = OpState::Queued;
  int64_t queuedNs = 0;
  int64_t startNs = 0;
  int64_t endNs = 0;
  const OpPlan* live = nullptr;  // while running
  std::string failure;
};

class FlightRecorder {
 public:
  // Records an op that waits before it runs (in a group, on a stream, for a copy from the GPU)
  // and marks it recorded; an op recorded already is left as it is.
  void queued(OpRecord& op);
  // Marks the op running, recording it first if it ran at once (one lock instead of two).
  void running(OpRecord& op, const OpPlan* plan);
  // Marks the op done or failed (recording it first if it failed before it could start, or ran at
  // once and never waited).
  void finished(const OpRecord& op, bool ok, const std::string& failure);
  // The same of ops that ended together, under one lock and one reading of the clock.
  void finished(std::span<const OpRecord> ops, bool ok, const std::string& failure);
  // Marks the op queued on its CUDA stream GPU to GPU.
  void handedToGpu(const OpRecord& op);
  // A readable table, newest op last; header names the rank and the communicator.
  std::string dump(int rank, int nranks, const std::string& commName) const;

 private:
  FlightEntry* find(const OpRecord& op);  // the op's entry; nullptr if it has none (any more)
  // A fresh entry for the op, queued at nowNs; called with the lock held.
  FlightEntry& record(const OpRecord& op, int64_t nowNs);
  // The same, noted in op.recordedAs so that the op's later states find it.
  FlightEntry& recordNoted(OpRecord& op, int64_t nowNs);
  void finishLocked(const OpRecord& op, OpState state, const std::string& failure, int64_t nowNs);
  size_t held() const { return recorded_ < ring_.size() ? recorded_ : ring_.size(); }
  mutable SpinLock lock_;
  // A ring of the last ops (allocated once: recording must not cost a small op an allocation).
  std::vector<FlightEntry> ring_;
  size_t recorded_ = 0;  // ops recorded so far; the newest is at (recorded_ - 1) % ring_.size()
  size_t next_ = 0;      // recorded_ % ring_.size(): the entry the next op takes
};

// Live communicators, so that a signal can dump them all.
void registerForDumps(slimecclComm_t comm);
void unregisterFromDumps(slimecclComm_t comm);
// Writes every live communicator's recorder to stderr.
void dumpAllCommunicators();

}  // namespace slimeccl
