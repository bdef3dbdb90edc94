// The gathered-A buffers AllGatherGemm uses when the caller passes none. The communicator keeps
// one between calls so that repeated calls do not allocate; calls in flight at the same time (on
// several streams, or in one group) each get their own.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

namespace slimeccl {

class WorkspacePool;

// A buffer on loan; going out of scope returns it to its pool.
class WorkspaceLease {
 public:
  WorkspaceLease(WorkspacePool* pool, std::unique_ptr<char[]> data, size_t bytes)
      : pool_(pool), data_(std::move(data)), bytes_(bytes) {}
  WorkspaceLease(const WorkspaceLease&) = delete;
  WorkspaceLease& operator=(const WorkspaceLease&) = delete;
  ~WorkspaceLease();

  char* data() const { return data_.get(); }

 private:
  WorkspacePool* pool_;
  std::unique_ptr<char[]> data_;
  size_t bytes_;
};

class WorkspacePool {
 public:
  std::unique_ptr<WorkspaceLease> take(size_t bytes);
  // Keeps the larger of the returned buffer and the one kept.
  void giveBack(std::unique_ptr<char[]> data, size_t bytes);

 private:
  std::mutex mutex_;
  std::unique_ptr<char[]> kept_;
  size_t keptBytes_ = 0;
};

}  // namespace slimeccl
