#include "src/exec/staging_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/error.h"
#include "src/base/param.h"
#include "topo/numa_binding.h"

namespace slimeccl {
namespace {

constexpr size_t kDefaultIdleLimitBytes = size_t{256} << 20;

size_t wholePages(size_t bytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

}  // namespace

StagingPool& StagingPool::instance() {
  // Never destroyed: ops of other threads may still release blocks while the process exits.
  static StagingPool* pool = new StagingPool(envBytes("SLIMECCL_STAGING_CACHE_BYTES", kDefaultIdleLimitBytes));
  return *pool;
}

StagingPool::~StagingPool() { trimTo(0); }

bool StagingPool::acquire(size_t bytes, int node, StagingBlock* out) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t best = idle_.size();
    for (size_t i = 0; i < idle_.size(); ++i) {
      const StagingBlock& b = idle_[i];
      if (b.node != node || b.capacity < bytes || b.capacity / 2 > bytes) continue;
      if (best == idle_.size() || b.capacity < idle_[best].capacity) best = i;
    }
    if (best != idle_.size()) {
      *out = idle_[best];
      idle_.erase(idle_.begin() + static_cast<ptrdiff_t>(best));
      idleBytes_ -= out->capacity;
      return true;
    }
  }
  StagingBlock block{nullptr, wholePages(bytes), node};
  if (node >= 0) {
    void* p = nullptr;
    if (allocOnNumaNode(block.capacity, node, &p) == slimecclSuccess) {
      block.data = static_cast<char*>(p);
      *out = block;
      return true;
    }
    clearThreadError();  // a full or missing node is no reason to fail the op: place it anywhere
    block.node = -1;
  }
  void* p = mmap(nullptr, block.capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    fail(slimecclSystemError, "mapping {} bytes of staging memory failed: {}", block.capacity, strerror(errno));
    return false;
  }
  block.data = static_cast<char*>(p);
  *out = block;
  return true;
}

void StagingPool::release(StagingBlock block) {
  if (block.data == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(block);
  idleBytes_ += block.capacity;
  trimTo(idleLimit_);
}

void StagingPool::trimTo(size_t limit) {
  size_t drop = 0;
  size_t kept = idleBytes_;
  while (drop < idle_.size() && kept > limit) kept -= idle_[drop++].capacity;
  for (size_t i = 0; i < drop; ++i) unmap(idle_[i]);
  idle_.erase(idle_.begin(), idle_.begin() + static_cast<ptrdiff_t>(drop));
  idleBytes_ = kept;
}

void StagingPool::unmap(const StagingBlock& block) {
  if (block.node >= 0)
    freeOnNumaNode(block.data, block.capacity);
  else
    munmap(block.data, block.capacity);
}

size_t StagingPool::idleBytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return idleBytes_;
}

size_t StagingPool::idleBlocks() {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_.size();
}

}  // namespace slimeccl
