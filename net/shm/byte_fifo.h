// A single-producer single-consumer byte FIFO in a shared mapping. Messages are a 64-bit length
// followed by the payload; both sides copy in pieces as space and data allow, so one message can
// be larger than the FIFO and the receiver consumes it while the sender is still writing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace slimeccl {

struct ByteFifoHeader {
  alignas(64) std::atomic<uint64_t> tail;  // bytes ever written (sender)
  alignas(64) std::atomic<uint64_t> head;  // bytes ever consumed (receiver)
  alignas(64) uint64_t capacity;           // power of two
  int32_t senderPid;                       // for liveness checks by the other side
  int32_t receiverPid;
  std::atomic<uint32_t> closed;  // set by either side when it closes the connection
};

class ByteFifo {
 public:
  static size_t mappingBytes(size_t capacity) { return sizeof(ByteFifoHeader) + capacity; }
  // Formats a fresh mapping (sender side, before it is shared).
  static void format(void* mapping, size_t capacity);
  explicit ByteFifo(void* mapping);

  // Sender: copies up to len bytes; returns how many fitted.
  size_t write(const void* data, size_t len);
  // Receiver: copies up to len bytes; returns how many were available.
  size_t read(void* data, size_t len);
  size_t capacity() const { return capacity_; }
  ByteFifoHeader* header() const { return header_; }

 private:
  ByteFifoHeader* header_;
  char* ring_;
  size_t capacity_;
  uint64_t localTail_ = 0;  // the only writer of tail keeps a private copy
  uint64_t localHead_ = 0;
};

}  // namespace slimeccl
