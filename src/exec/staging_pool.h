// Staging memory kept for reuse. Ops too large for the plan cache used to map, fault in, zero and
// unmap their scratch and reduction landing areas on every call: a 32 MiB AllReduce on 4 ranks
// took 225-360 ms that way on the development VM, 23-24 ms with this pool. Blocks released here
// go to the next op that fits them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace slimeccl {

struct StagingBlock {
  char* data = nullptr;
  size_t capacity = 0;  // whole pages
  int node = -1;        // the NUMA node it was placed on, -1: no placement
};

class StagingPool {
 public:
  // The process's pool; idle blocks beyond SLIMECCL_STAGING_CACHE_BYTES are unmapped.
  static StagingPool& instance();

  explicit StagingPool(size_t idleLimitBytes) : idleLimit_(idleLimitBytes) {}
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // A block of at least `bytes` (> 0) on `node` (-1: anywhere); its contents are undefined. A
  // kept block serves when it is no more than twice the size asked for. False when memory runs
  // out (the thread's error says so).
  bool acquire(size_t bytes, int node, StagingBlock* out);
  // Back for reuse (the least recently released blocks go first when the pool holds too much).
  void release(StagingBlock block);

  size_t idleBytes();
  size_t idleBlocks();

 private:
  static void unmap(const StagingBlock& block);
  void trimTo(size_t limit);

  const size_t idleLimit_;
  std::mutex mutex_;
  std::vector<StagingBlock> idle_;  // least recently released first
  size_t idleBytes_ = 0;
};

}  // namespace slimeccl
