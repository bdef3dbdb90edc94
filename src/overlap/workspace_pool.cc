#include "src/overlap/workspace_pool.h"

namespace slimeccl {

WorkspaceLease::~WorkspaceLease() { pool_->giveBack(std::move(data_), bytes_); }

std::unique_ptr<WorkspaceLease> WorkspacePool::take(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (kept_ != nullptr && keptBytes_ >= bytes) {
      const size_t keptBytes = keptBytes_;
      keptBytes_ = 0;
      return std::make_unique<WorkspaceLease>(this, std::move(kept_), keptBytes);
    }
  }
  // Uninitialised: the AllGather writes every byte before anything reads it.
  return std::make_unique<WorkspaceLease>(this, std::unique_ptr<char[]>(new char[bytes == 0 ? 1 : bytes]), bytes);
}

void WorkspacePool::giveBack(std::unique_ptr<char[]> data, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (kept_ != nullptr && keptBytes_ >= bytes) return;
  kept_ = std::move(data);
  keptBytes_ = bytes;
}

}  // namespace slimeccl
