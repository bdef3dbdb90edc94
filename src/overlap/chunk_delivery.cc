#include "src/overlap/chunk_delivery.h"

#include "src/base/error.h"

namespace slimeccl {

ChunkDelivery::ChunkDelivery(const ChunkTarget& target, CallbackWorker* worker, std::shared_ptr<void> userState)
    : target_(target), worker_(worker), userState_(std::move(userState)) {}

ChunkDelivery::~ChunkDelivery() { stopAndWait(); }

void ChunkDelivery::begin() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    started_ = true;
  }
  worker_->post([this] {
    deliver();
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    changed_.notify_all();
  });
}

void ChunkDelivery::blockLanded(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++landed_;
  if (rank == target_.rank)
    ownLanded_ = true;
  else
    waiting_.push_back(rank);
  changed_.notify_all();
}

void ChunkDelivery::deliver() {
  bool ownDelivered = false;
  for (int delivered = 0; delivered < target_.nranks; ++delivered) {
    int block;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Blocks of other ranks that land before the own one wait for it, so the own block is first.
      changed_.wait(lock, [&] { return stop_ || (ownDelivered ? !waiting_.empty() : ownLanded_); });
      if (stop_) return;
      if (ownDelivered) {
        block = waiting_.front();
        waiting_.pop_front();
      } else {
        block = target_.rank;
        ownDelivered = true;
      }
    }
    target_.fn(block, target_.recvbuff + static_cast<size_t>(block) * target_.blockBytes, target_.count, target_.user);
  }
}

void ChunkDelivery::stopAndWait() {
  std::unique_lock<std::mutex> lock(mutex_);
  stop_ = true;
  changed_.notify_all();
  changed_.wait(lock, [this] { return !started_ || finished_; });
}

slimecclResult_t ChunkDelivery::end(slimecclResult_t rc) {
  int landed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    landed = landed_;
  }
  if (rc == slimecclSuccess && landed == target_.nranks) {
    // Delivery returns after the last callback.
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !started_ || finished_; });
  } else {
    stopAndWait();
    if (rc == slimecclSuccess)
      rc = fail(slimecclInternalError, "rank {}: AllGatherOverlap: the AllGather finished with {} of {} blocks landed",
                target_.rank, landed, target_.nranks);
  }
  userState_.reset();
  return rc;
}

}  // namespace slimeccl
