// Flags between GPUs as stream work: a batch of 32-bit writes and waits that a CUDA stream runs in
// order (cuStreamBatchMemOp), so that ranks order themselves GPU to GPU with no host thread and
// no SM. CUDA-free: host-only code may include it.
#pragma once

#include <cstdint>
#include <vector>

#include "include/slimeccl.h"

namespace slimeccl {

class MemOpBatch {
 public:
  void write(uint64_t address, uint32_t value);
  // Waits until the word at `address` equals `value`.
  void waitEquals(uint64_t address, uint32_t value);
  // Waits until the word at `address`, a count that only grows (and may wrap), has reached `value`.
  void waitAtLeast(uint64_t address, uint32_t value);
  // Queues the batch on `stream` (a cudaStream_t) and empties it.
  slimecclResult_t enqueue(void* stream);

 private:
  enum class Kind { Write, WaitEquals, WaitAtLeast };
  struct Op {
    Kind kind;
    uint64_t address;
    uint32_t value;
  };
  std::vector<Op> ops_;
};

// Whether the driver offers the stream memory operations this path needs.
bool streamMemOpsAvailable();

}  // namespace slimeccl
