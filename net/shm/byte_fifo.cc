#include "net/shm/byte_fifo.h"

#include <cstring>
#include <new>

namespace slimeccl {

void ByteFifo::format(void* mapping, size_t capacity) {
  auto* header = new (mapping) ByteFifoHeader;
  header->tail.store(0, std::memory_order_relaxed);
  header->head.store(0, std::memory_order_relaxed);
  header->capacity = capacity;
  header->senderPid = 0;
  header->receiverPid = 0;
  header->closed.store(0, std::memory_order_relaxed);
}

ByteFifo::ByteFifo(void* mapping)
    : header_(static_cast<ByteFifoHeader*>(mapping)), ring_(static_cast<char*>(mapping) + sizeof(ByteFifoHeader)),
      capacity_(header_->capacity) {
  localTail_ = header_->tail.load(std::memory_order_acquire);
  localHead_ = header_->head.load(std::memory_order_acquire);
}

size_t ByteFifo::write(const void* data, size_t len) {
  uint64_t head = header_->head.load(std::memory_order_acquire);
  size_t space = capacity_ - static_cast<size_t>(localTail_ - head);
  size_t n = len < space ? len : space;
  if (n == 0) return 0;
  size_t at = static_cast<size_t>(localTail_ & (capacity_ - 1));
  size_t first = n < capacity_ - at ? n : capacity_ - at;
  memcpy(ring_ + at, data, first);
  if (n > first) memcpy(ring_, static_cast<const char*>(data) + first, n - first);
  localTail_ += n;
  header_->tail.store(localTail_, std::memory_order_release);
  return n;
}

size_t ByteFifo::read(void* data, size_t len) {
  uint64_t tail = header_->tail.load(std::memory_order_acquire);
  size_t avail = static_cast<size_t>(tail - localHead_);
  size_t n = len < avail ? len : avail;
  if (n == 0) return 0;
  size_t at = static_cast<size_t>(localHead_ & (capacity_ - 1));
  size_t first = n < capacity_ - at ? n : capacity_ - at;
  memcpy(data, ring_ + at, first);
  if (n > first) memcpy(static_cast<char*>(data) + first, ring_, n - first);
  localHead_ += n;
  header_->head.store(localHead_, std::memory_order_release);
  return n;
}

}  // namespace slimeccl
