#include "src/overlap/block_production.h"

#include <chrono>

#include "src/comm.h"
#include "src/base/error.h"

namespace slimeccl {
namespace {

// How often a Reduce waiting for its block looks at its communicator: an abort from another thread
// ends the wait within this.
constexpr auto kCommCheck = std::chrono::milliseconds(20);

class BlockGate final : public InputGate {
 public:
  BlockGate(std::shared_ptr<BlockProduction> production, int block)
      : production_(std::move(production)), block_(block) {}
  slimecclResult_t await(slimecclComm* comm) override { return production_->awaitBlock(block_, comm); }

 private:
  std::shared_ptr<BlockProduction> production_;
  int block_;
};

}  // namespace

BlockProduction::BlockProduction(const ProductionTarget& target, CallbackWorker* worker,
                                 std::shared_ptr<void> userState)
    : target_(target), worker_(worker), userState_(std::move(userState)) {}

std::shared_ptr<InputGate> BlockProduction::gateOf(int block) {
  return std::make_shared<BlockGate>(shared_from_this(), block);
}

slimecclResult_t BlockProduction::awaitBlock(int block, slimecclComm* comm) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!started_ && !stop_) {
    started_ = true;
    worker_->post([self = shared_from_this()] { self->produce(); });
  }
  for (;;) {
    if (filled_ > block) return slimecclSuccess;
    if (stop_)
      return fail(slimecclInvalidUsage,
                  "rank {}: ReduceScatterOverlap: block {} of the send buffer was never produced: the call failed "
                  "before its turn",
                  comm->rank, block);
    if (const slimecclResult_t rc = commUsable(comm, "ReduceScatterOverlap"); rc != slimecclSuccess) {
      lock.unlock();
      stopAndWait();
      return rc;
    }
    changed_.wait_for(lock, kCommCheck);
  }
}

void BlockProduction::stopAndWait() {
  std::unique_lock<std::mutex> lock(mutex_);
  stop_ = true;
  changed_.wait(lock, [this] { return !started_ || finished_; });
}

void BlockProduction::produce() {
  for (int block = 0; block < target_.nranks; ++block) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) break;
    }
    target_.fn(block, target_.sendbuff + static_cast<size_t>(block) * target_.blockBytes, target_.count, target_.user);
    std::lock_guard<std::mutex> lock(mutex_);
    filled_ = block + 1;
    changed_.notify_all();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  changed_.notify_all();
}

}  // namespace slimeccl
