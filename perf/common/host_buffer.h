// A page-aligned host buffer, allocated once at the largest size of the sweep and reused for all.
#pragma once

#include <cstddef>
#include <memory>

namespace slimeccl_perf {

class HostBuffer {
 public:
  HostBuffer() = default;
  // Zero-filled, so its pages are mapped before anything is timed. Never null, even for 0 bytes.
  explicit HostBuffer(size_t bytes);

  char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(char* memory) const;
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

}  // namespace slimeccl_perf
