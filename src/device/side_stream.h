// A CUDA stream of the library's beside a caller's, with a CUDA-ordered slimeccl stream on it: work
// forked from the caller's stream runs there alongside the caller's own, and the caller's stream
// waits for it where it must. Host-only code may include this header.
#pragma once

#include <memory>

#include "include/slimeccl.h"

namespace slimeccl {

class SideStream {
 public:
  // A non-blocking CUDA stream on GPU `device`. Fails with a sentence without CUDA or a GPU.
  static slimecclResult_t create(int device, std::unique_ptr<SideStream>* out);
  ~SideStream();
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;

  int device() const { return device_; }
  slimecclStream_t stream() const { return stream_; }  // CUDA-ordered, on the side stream
  void* cudaStream() const { return cuda_; }           // cudaStream_t
  // The side stream waits for the work queued on `cudaStream` (a cudaStream_t) so far.
  slimecclResult_t waitFor(void* cudaStream);
  // `cudaStream` waits for the work queued on the side stream so far.
  slimecclResult_t joinInto(void* cudaStream);

 private:
  SideStream() = default;

  int device_ = -1;
  void* cuda_ = nullptr;    // cudaStream_t
  void* forked_ = nullptr;  // cudaEvent_t, recorded on the caller's stream
  void* joined_ = nullptr;  // cudaEvent_t, recorded on the side stream
  slimecclStream_t stream_ = nullptr;
};

}  // namespace slimeccl
