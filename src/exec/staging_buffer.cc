#include "src/exec/staging_buffer.h"

#include <new>
#include <utility>

#include "src/base/error.h"

namespace slimeccl {
namespace {

// Below this malloc's own free lists serve as well as the pool.
constexpr size_t kPooledFromBytes = 64 * 1024;

}  // namespace

StagingBuffer::StagingBuffer(size_t bytes, int node) : bytes_(bytes) {
  if (bytes == 0) return;
  if (bytes < kPooledFromBytes) {
    data_ = new char[bytes];
    return;
  }
  if (!StagingPool::instance().acquire(bytes, node, &pooled_)) throw std::bad_alloc();
  data_ = pooled_.data;
}

StagingBuffer::~StagingBuffer() { release(); }

StagingBuffer::StagingBuffer(StagingBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)),
      pooled_(std::exchange(other.pooled_, StagingBlock{})) {}

StagingBuffer& StagingBuffer::operator=(StagingBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    pooled_ = std::exchange(other.pooled_, StagingBlock{});
  }
  return *this;
}

void StagingBuffer::release() {
  if (data_ == nullptr) return;
  if (pooled_.data != nullptr)
    StagingPool::instance().release(std::exchange(pooled_, StagingBlock{}));
  else
    delete[] data_;
  data_ = nullptr;
}

}  // namespace slimeccl
