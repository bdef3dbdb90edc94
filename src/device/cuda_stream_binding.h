// Host-run ops in the order of a CUDA stream (slimecclStreamCreateFromCuda). Work queued on the
// CUDA stream before an op is done before the op starts, and work queued after it waits until it
// is done, while the caller goes on at once, as with NCCL. The stream and the library's worker
// thread meet at numbered points, through two words of pinned host memory: at a point the stream
// writes its number into one (cuStreamWriteValue32), which the worker polls before it starts what
// follows, and then waits (cuStreamWaitValue32) until the worker has written the number into the
// other. Everything the device does for a group of ops (copies in and out of host staging
// included) is queued on the stream with its points when the group is queued, so the worker makes
// no CUDA call while the stream waits for it: an application call that waits for the stream
// (cudaMalloc, cudaFree, a synchronous copy) cannot stop the worker that would release it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "include/slimeccl.h"

namespace slimeccl {

class CudaStreamBinding {
 public:
  // Binds cudaStream (a cudaStream_t; 0 is the legacy default stream). Fails with a sentence where
  // no GPU can be used or the driver cannot make a stream wait on host memory.
  static slimecclResult_t create(void* cudaStream, std::unique_ptr<CudaStreamBinding>* out);
  ~CudaStreamBinding();
  CudaStreamBinding(const CudaStreamBinding&) = delete;
  CudaStreamBinding& operator=(const CudaStreamBinding&) = delete;

  // By the caller, under the stream's enqueue lock, in the order the stream runs them. Queues the
  // next point on the CUDA stream and sets *point to its number.
  slimecclResult_t queuePoint(uint32_t* point);
  // Queues a wait until the worker has released `point`.
  slimecclResult_t queueWaitForRelease(uint32_t point);
  // Pinned host memory of at least `bytes` for the whole ops of the group being queued (staged
  // whole, not in chunks): one area, used by each group of the stream in turn, since the stream
  // copies a group's inputs into it only after the group before has released its last point and
  // had its outputs copied out. It grows where a group needs more; what it held before stays
  // until the binding goes, for groups still in flight.
  slimecclResult_t wholeOpStaging(size_t bytes, char** out);
  // Queues a copy of `bytes` (host memory and device memory, either way) on the CUDA stream.
  slimecclResult_t queueCopy(void* dst, const void* src, size_t bytes);

  // On the worker, without a CUDA call. Returns once the CUDA stream has reached `point`.
  void awaitPoint(uint32_t point) const;
  // Lets the CUDA stream go past its waits for `point` and every point before it.
  void release(uint32_t point);

  // Everything queued on the CUDA stream so far is done (what it waits on must be released).
  slimecclResult_t synchronize();
  // Whether the CUDA stream has nothing left to do.
  bool idle();

  void* cudaStream() const { return stream_; }  // cudaStream_t
  // The stream to queue copies on: cudaStream, where the legacy default stream is cudaStreamLegacy
  // rather than null (which callees take for no stream).
  void* queueStream() const;
  int device() const { return device_; }

 private:
  CudaStreamBinding() = default;

  void* stream_ = nullptr;  // cudaStream_t
  int device_ = 0;
  // Pinned, mapped host words, with their addresses for the GPU: the last point the stream
  // reached, and the last point the worker released.
  uint32_t* reached_ = nullptr;
  uint64_t reachedOnDevice_ = 0;
  uint32_t* released_ = nullptr;
  uint64_t releasedOnDevice_ = 0;
  uint32_t lastPoint_ = 0;
  std::vector<char*> wholeOpStaging_;  // the last is in use; pinned
  size_t wholeOpStagingBytes_ = 0;
};

}  // namespace slimeccl
