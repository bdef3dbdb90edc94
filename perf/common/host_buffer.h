// A page-aligned host buffer, allocated once at the largest size of the sweep and reused for all:
// private memory, or (-R 1) shared memory from slimecclMemAlloc that peers on the host can map.
#pragma once

#include <cstddef>
#include <memory>

namespace slimeccl_perf {

class HostBuffer {
 public:
  HostBuffer() = default;
  // Zero-filled, so its pages are mapped before anything is timed. Never null, even for 0 bytes.
  explicit HostBuffer(size_t bytes, bool shared = false);

  char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    bool shared;  // value-initialized (false) by a default unique_ptr
    void operator()(char* memory) const;
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

}  // namespace slimeccl_perf
