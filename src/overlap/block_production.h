// ReduceScatterOverlap's producer on host buffers: the communicator's callback thread fills the
// send buffer's blocks in order (block 0, 1, ..., the same order on every rank), each by one
// callback, while the executor reduces the blocks already filled. Block d's Reduce waits at its
// gate (src/exec/input_gate.h) until block d is filled; block 0's gate starts the producer, so it
// begins when the op's turn comes on its stream.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>

#include "include/slimeccl.h"
#include "src/exec/input_gate.h"
#include "src/overlap/callback_worker.h"

namespace slimeccl {

struct ProductionTarget {
  slimecclChunkFn fn;
  void* user;
  char* sendbuff;
  size_t count;  // elements per block
  size_t blockBytes;
  int nranks;
};

class BlockProduction : public std::enable_shared_from_this<BlockProduction> {
 public:
  // `userState` is what `user` and the send buffer point into (a workspace): it lives as long as the
  // ops' gates, which the caller's op list keeps until the last Reduce has ended.
  BlockProduction(const ProductionTarget& target, CallbackWorker* worker, std::shared_ptr<void> userState);
  BlockProduction(const BlockProduction&) = delete;
  BlockProduction& operator=(const BlockProduction&) = delete;

  // The gate of the Reduce of block `block`.
  std::shared_ptr<InputGate> gateOf(int block);
  // Returns once block `block` is filled; with the comm's error where the comm can no longer be
  // used (the producer is then stopped and waited for).
  slimecclResult_t awaitBlock(int block, slimecclComm* comm);
  // Makes the producer stop before its next callback and waits for it: a call that failed part way
  // returns only when no callback can still read its buffers.
  void stopAndWait();

 private:
  void produce();

  const ProductionTarget target_;
  CallbackWorker* worker_;
  std::shared_ptr<void> userState_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int filled_ = 0;  // blocks 0 .. filled_-1 hold their final bytes
  bool started_ = false;
  bool stop_ = false;
  bool finished_ = false;  // produce() has returned
};

}  // namespace slimeccl
