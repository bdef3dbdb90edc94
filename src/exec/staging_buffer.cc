#include "src/exec/staging_buffer.h"

#include <utility>

#include "src/error.h"
#include "topo/numa_binding.h"

namespace slimeccl {
namespace {

// Below this a node-placed mapping costs more (two system calls) than its placement saves.
constexpr size_t kNodePlacedFromBytes = 64 * 1024;

}  // namespace

StagingBuffer::StagingBuffer(size_t bytes, int node) : bytes_(bytes) {
  if (bytes == 0) return;
  if (node >= 0 && bytes >= kNodePlacedFromBytes) {
    void* p = nullptr;
    if (allocOnNumaNode(bytes, node, &p) == slimecclSuccess) {
      data_ = static_cast<char*>(p);
      onNode_ = true;
      return;
    }
    clearThreadError();  // a full or missing node is no reason to fail the op: use the heap
  }
  data_ = new char[bytes]();
}

StagingBuffer::~StagingBuffer() { release(); }

StagingBuffer::StagingBuffer(StagingBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      onNode_(std::exchange(other.onNode_, false)) {}

StagingBuffer& StagingBuffer::operator=(StagingBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    onNode_ = std::exchange(other.onNode_, false);
  }
  return *this;
}

void StagingBuffer::release() {
  if (data_ == nullptr) return;
  if (onNode_)
    freeOnNumaNode(data_, bytes_);
  else
    delete[] data_;
  data_ = nullptr;
}

}  // namespace slimeccl
