// Host-run ops in the order of a CUDA stream (slimecclStreamCreateFromCuda). Work queued on the
// CUDA stream before an op is done before the op starts, and work queued after it waits until it
// is done, while the caller goes on at once, as with NCCL. The stream and the library's worker
// thread meet at numbered points, through two words of pinned host memory: at a point the stream
// writes its number into one (a write of cuStreamBatchMemOp), which the worker polls before it
// starts what follows, and later waits (cuStreamWaitValue32) until the worker has written the
// number into the other. Everything the device does for a group of ops (copies in and out of host staging
// included) is queued on the stream with its points when the group is queued, so the worker makes
// no CUDA call while the stream waits for it: an application call that waits for the stream
// (cudaMalloc, cudaFree, a synchronous copy) cannot stop the worker that would release it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "include/slimeccl.h"
#include "src/device/chunk_staging.h"

namespace slimeccl {

class CudaStreamBinding {
 public:
  // Binds cudaStream (a cudaStream_t; 0 is the legacy default stream). Fails with a sentence where
  // no GPU can be used or the driver cannot make a stream wait on host memory.
  static slimecclResult_t create(void* cudaStream, std::unique_ptr<CudaStreamBinding>* out);
  ~CudaStreamBinding();
  CudaStreamBinding(const CudaStreamBinding&) = delete;
  CudaStreamBinding& operator=(const CudaStreamBinding&) = delete;

  // Where work of a group is queued: on the CUDA stream itself, or on one of two streams of the
  // binding's own, forked from it and joined back (fork, join), so that a group's copies into
  // staging and out of it run side by side on the GPU's copy engines.
  enum class Lane { Caller, In, Out };

  // By the caller, under the stream's enqueue lock, in the order the stream runs them. Queues the
  // next point on `lane` and sets *point to its number.
  slimecclResult_t queuePoint(Lane lane, uint32_t* point);
  // Queues on `lane` a wait until the worker has released `point`.
  slimecclResult_t queueWaitForRelease(Lane lane, uint32_t point);
  // The lanes In and Out start after the work queued on the CUDA stream so far.
  slimecclResult_t fork();
  // The CUDA stream goes on once what In and Out hold so far is done.
  slimecclResult_t join();
  // Out marks bay `bay` free (its copies out so far are done); In waits for that mark.
  slimecclResult_t queueBayFreed(int bay);
  slimecclResult_t queueWaitForBay(int bay);
  // The cudaStream_t of a lane; Caller's is the CUDA stream, where the legacy default stream is
  // cudaStreamLegacy rather than null (which callees take for no stream).
  void* laneStream(Lane lane) const;

  // On the worker, without a CUDA call. Returns true once the CUDA stream has reached `point`, or
  // false once `giveUp` says so (asked between sleeps: the group's comms were aborted).
  bool awaitPoint(uint32_t point, const std::function<bool()>& giveUp) const;
  // Lets the CUDA stream go past its waits for `point` and every point before it.
  void release(uint32_t point);

  // Everything queued on the CUDA stream so far is done (what it waits on must be released).
  slimecclResult_t synchronize();
  // Whether the CUDA stream has nothing left to do.
  bool idle();

  void* cudaStream() const { return stream_; }  // cudaStream_t
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
  // The lanes In and Out (cudaStream_t), and the events between them and the CUDA stream, made
  // with the first group that forks.
  void* lanes_[2] = {};
  void* forked_ = nullptr;
  void* joined_[2] = {};
  void* bayFreed_[ChunkStaging::kBays] = {};
};

}  // namespace slimeccl
