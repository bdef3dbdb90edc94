// Runs an AllGatherOverlap callback for each rank's block on the communicator's callback thread,
// one call at a time: the own block first, then the others in the order they land. The executor's progress
// thread only queues the news, so a long callback (a GEMM) never holds up the network for the
// other ranks, and block i is consumed while block i+1 is still moving.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>

#include "src/exec/block_listener.h"
#include "src/overlap/callback_worker.h"

namespace slimeccl {

struct ChunkTarget {
  slimecclChunkFn fn;
  void* user;
  char* recvbuff;
  size_t count;  // elements per block
  size_t blockBytes;
  int rank;
  int nranks;
};

class ChunkDelivery final : public BlockListener {
 public:
  // `userState` is what `user` points into; it is released as soon as the op ends.
  ChunkDelivery(const ChunkTarget& target, CallbackWorker* worker, std::shared_ptr<void> userState);
  ~ChunkDelivery() override;

  void begin() override;
  void blockLanded(int rank) override;
  // On success waits for every callback; on failure lets the running one finish and drops the rest.
  slimecclResult_t end(slimecclResult_t rc) override;

 private:
  void deliver();
  // Makes a delivery still running return before its next callback, and waits for it.
  void stopAndWait();

  const ChunkTarget target_;
  CallbackWorker* worker_;
  std::shared_ptr<void> userState_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<int> waiting_;  // landed blocks of other ranks, in arrival order
  bool ownLanded_ = false;
  int landed_ = 0;
  bool stop_ = false;
  bool started_ = false;
  bool finished_ = false;  // deliver() has returned
};

}  // namespace slimeccl
