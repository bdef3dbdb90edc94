// GPU memory for the perf tools' device buffers (-D 1), and the CUDA stream their ops go to, as
// nccl-tests' buffers and streams. Builds without CUDA refuse -D 1 with a UsageError.
#pragma once

#include <cstddef>
#include <memory>

namespace slimeccl_perf {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Zero-filled device memory on the calling thread's current GPU; never null, even for 0 bytes.
  explicit DeviceBuffer(size_t bytes);

  char* data() const { return data_.get(); }
  void upload(const void* host, size_t offset, size_t bytes);
  void download(void* host, size_t offset, size_t bytes) const;

 private:
  struct Free {
    void operator()(char* memory) const;
  };
  std::unique_ptr<char, Free> data_;
};

// Makes GPU (rank mod the GPU count) current for the calling thread; throws UsageError where no
// GPU can be used.
void useGpuOfRank(int rank);
// A non-blocking CUDA stream (cudaStream_t) on the current GPU, and its end.
void* createCudaStream();
void destroyCudaStream(void* stream);

}  // namespace slimeccl_perf
