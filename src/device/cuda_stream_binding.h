// Host-run ops in the order of a CUDA stream (slimecclStreamCreateFromCuda). Work queued on the
// CUDA stream before an op is done before the op starts, and work queued after it waits until it
// is done, while the caller goes on at once, as with NCCL. For each group of ops the CUDA stream
// gets an event, after which the library's worker may start the group, and then a wait
// (cuStreamWaitValue32) on a flag in pinned host memory that the worker sets once the group is
// done, its copies out of host staging included.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "include/slimeccl.h"

namespace slimeccl {

class CudaStreamBinding {
 public:
  // What the CUDA stream and the worker share of one group of ops.
  struct Ticket {
    uint32_t value = 0;       // the flag value that releases the group's wait
    void* started = nullptr;  // cudaEvent_t: the work queued before the group is done
  };

  // Binds cudaStream (a cudaStream_t; 0 is the legacy default stream). Fails with a sentence where
  // no GPU can be used or the driver cannot make a stream wait on host memory.
  static slimecclResult_t create(void* cudaStream, std::unique_ptr<CudaStreamBinding>* out);
  ~CudaStreamBinding();
  CudaStreamBinding(const CudaStreamBinding&) = delete;
  CudaStreamBinding& operator=(const CudaStreamBinding&) = delete;

  // Queues a group's start event and its wait on the CUDA stream; nothing is queued on failure.
  slimecclResult_t enqueue(Ticket* ticket);
  // On the worker: blocks until the CUDA stream has done what came before the group.
  slimecclResult_t waitForStart(const Ticket& ticket);
  // Lets the CUDA stream go past the group's wait. Groups are released in the order queued.
  void release(const Ticket& ticket);

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
  uint32_t* flag_ = nullptr;   // pinned, mapped host memory the CUDA stream waits on
  uint64_t flagOnDevice_ = 0;  // its address for the GPU
  uint32_t nextValue_ = 0;
  std::mutex mutex_;           // events_: the caller's and the worker's
  std::vector<void*> events_;  // free events for later tickets
};

}  // namespace slimeccl
