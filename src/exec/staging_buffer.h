// Memory an op stages data in (its schedule's scratch buffer, the landing area of chunks to be
// reduced): zeroed, and on the rank's home NUMA node when the machine has several, so that the
// copies and reductions through it stay on the rank's own memory controller.
#pragma once

#include <cstddef>

namespace slimeccl {

class StagingBuffer {
 public:
  StagingBuffer() = default;
  // node < 0: from the heap. Large buffers on a node come from libnuma, whose pages are zeroed.
  StagingBuffer(size_t bytes, int node);
  ~StagingBuffer();
  StagingBuffer(StagingBuffer&& other) noexcept;
  StagingBuffer& operator=(StagingBuffer&& other) noexcept;
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  char* data() const { return data_; }
  size_t size() const { return bytes_; }
  bool onNode() const { return onNode_; }

 private:
  void release();

  char* data_ = nullptr;
  size_t bytes_ = 0;
  bool onNode_ = false;  // from libnuma (else from the heap)
};

}  // namespace slimeccl
