// The buffers a communicator's user registered (slimecclCommRegister): on the GPU-to-GPU path the
// peers keep their mappings of these for the comm's life (src/device/gpu_peers.h).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace slimeccl {

class Registrations {
 public:
  // Records [data, data + bytes); the handle names it for remove().
  void* add(const void* data, size_t bytes);
  // False when `handle` is not a live registration of this set.
  bool remove(void* handle);
  // Whether [data, data + bytes) lies within one registration.
  bool covers(const void* data, size_t bytes) const;

 private:
  struct Entry {
    const char* data;
    size_t bytes;
  };
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace slimeccl
