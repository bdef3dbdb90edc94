// A guarded buffer the library may read but must not write: a send buffer out of place, or a
// buffer the API says is unused on this rank (Broadcast's sendbuff, Reduce's recvbuff off the root).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "buffers.h"

namespace slimeccl_test {

class SealedBuffer {
 public:
  explicit SealedBuffer(size_t bytes) : buffer_(bytes) {}

  uint8_t* data() { return buffer_.data(); }
  size_t size() const { return buffer_.size(); }

  // Remembers the current content; call once the buffer is filled.
  void seal();
  // Throws RankFailure unless the content is what seal() saw and the guards are intact.
  void verifyUnchanged(const char* what) const;
  // For a buffer that was an output after all (in place at the root): only the guards are checked.
  void verifyGuards(const char* what) const;

 private:
  GuardedBuffer buffer_;
  std::vector<uint8_t> sealed_;
};

// Throws RankFailure naming `what` when a guard byte of `buffer` was overwritten.
void verifyGuards(const GuardedBuffer& buffer, const char* what);

}  // namespace slimeccl_test
