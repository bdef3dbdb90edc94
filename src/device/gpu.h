// CUDA device memory as the core uses it: telling device pointers from host ones, and copies
// between them. Built with CUDA (SLIMECCL_HAVE_CUDA), the library links the CUDA runtime but needs
// neither a GPU nor a driver: without them no pointer is device memory, and the calls below that
// need a GPU fail with a sentence. Built without CUDA, the same holds.
//
// The library pins no host memory once ops run: pinning and unpinning may wait for the GPU to go
// idle, while GPU streams of CUDA-ordered ops wait for ops of this process to run.
#pragma once

#include <cstddef>

#include "include/slimeccl.h"

namespace slimeccl {

// Whether a CUDA device can be used here (the driver answers and counts at least one GPU).
// Asked once per process.
bool gpuPresent();
// How many GPUs this process sees (0 where none can be used).
int gpuCount();
// The GPU current on the calling thread where the process already uses it (a context current on
// the thread, or the GPU's primary context made, as cudaSetDevice does), else -1. Creates no
// context.
int gpuInUse();
// The reason gpuPresent() is false, as a sentence ("" when a GPU is present).
const char* gpuAbsence();

// Whether p points into CUDA device memory, which host code cannot read or write as it is
// (pinned and managed memory can be, and count as host memory). *device: the GPU it lives on.
bool isDeviceMemory(const void* p, int* device = nullptr);

// What a copy between host and device memory comes after.
enum class CopyOrder {
  // The work queued on the legacy default stream before it (a cudaMemcpy into the buffer, a
  // kernel on stream 0), as a synchronous CUDA call: ops that run when called, or on a host stream.
  AfterLegacyStream,
  // Nothing: the caller ordered it already (CUDA-ordered ops, after their start event). It goes
  // on a non-blocking stream of the calling thread, since the legacy default stream would wait
  // for blocking streams that may themselves wait for this op.
  Unordered,
};

// Whether a kernel on GPU `device` can read and write p as it is: device memory of that GPU,
// managed memory, or pinned host memory mapped at its own address.
bool kernelReaches(const void* p, int device);

// The allocation of device memory that holds p: its first byte and size; false for other memory.
bool deviceAllocation(const void* p, const char** base, size_t* bytes);

// Makes GPU `device` current for the calling thread for good: a thread of the library's that works
// for one GPU (a stream's worker) calls it first, so that OnDevice there never switches back to
// GPU 0, which would make a context on GPU 0 in a process that uses another GPU. False where the
// GPU cannot be made current.
bool keepDevice(int device);

// Makes GPU `device` current for the calling thread for the scope; the previous one comes back.
class OnDevice {
 public:
  explicit OnDevice(int device);
  ~OnDevice();
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;
  bool ok() const { return ok_; }  // false when the GPU could not be made current

 private:
  int previous_ = 0;
  bool switched_ = false;
  bool ok_ = true;
};

// Whether `cudaStream` (a cudaStream_t) is being captured into a CUDA graph.
bool isCapturing(void* cudaStream);

// For its scope, lets the calling thread make CUDA calls that a stream capture in the stricter
// modes would refuse (setting up, mapping and allocating; none touches the captured stream).
class CaptureModeRelaxed {
 public:
  CaptureModeRelaxed();
  ~CaptureModeRelaxed();
  CaptureModeRelaxed(const CaptureModeRelaxed&) = delete;
  CaptureModeRelaxed& operator=(const CaptureModeRelaxed&) = delete;

 private:
  int previous_ = 0;  // cudaStreamCaptureMode
};

// Returns once the work queued on `cudaStream` (a cudaStream_t of GPU `device`) so far is done;
// a sentence where the GPU reports an error.
slimecclResult_t waitForQueuedWork(void* cudaStream, int device);

// Copies bytes between host memory and the memory of GPU `device` (either way) and returns when
// they have landed.
slimecclResult_t gpuCopy(void* dst, const void* src, size_t bytes, int device, CopyOrder order);

}  // namespace slimeccl
