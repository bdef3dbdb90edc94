// Memory an op stages data in (its schedule's scratch buffer, the landing area of chunks to be
// reduced). Its contents are undefined: schedules write staging before they read it. From 64 KiB
// it comes from the process's StagingPool, on the rank's home NUMA node when the machine has
// several, so that the copies and reductions through it stay on the rank's own memory controller.
#pragma once

#include <cstddef>

#include "src/exec/staging_pool.h"

namespace slimeccl {

class StagingBuffer {
 public:
  StagingBuffer() = default;
  // node < 0: no placement. Throws std::bad_alloc when no memory is left.
  StagingBuffer(size_t bytes, int node);
  ~StagingBuffer();
  StagingBuffer(StagingBuffer&& other) noexcept;
  StagingBuffer& operator=(StagingBuffer&& other) noexcept;
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  char* data() const { return data_; }
  size_t size() const { return bytes_; }
  bool onNode() const { return pooled_.node >= 0; }

 private:
  void release();

  char* data_ = nullptr;
  size_t bytes_ = 0;
  StagingBlock pooled_;  // data_ lies in it when it came from the pool (else from the heap)
};

}  // namespace slimeccl
