#include "src/device/side_stream.h"

#include "src/device/gpu.h"
#include "src/base/error.h"
#include "src/stream.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

namespace {

slimecclResult_t sideFailure(cudaError_t rc, int device, const char* what) {
  cudaGetLastError();
  return fail(slimecclUnhandledDeviceError, "side stream on GPU {}: {} failed: {}", device, what,
              cudaGetErrorString(rc));
}

}  // namespace

#define SIDE_CHECK(call, what)                                                \
  do {                                                                        \
    const cudaError_t side_rc_ = (call);                                      \
    if (side_rc_ != cudaSuccess) return sideFailure(side_rc_, device_, what); \
  } while (0)

slimecclResult_t SideStream::create(int device, std::unique_ptr<SideStream>* out) {
  std::unique_ptr<SideStream> side(new SideStream());
  side->device_ = device;
  OnDevice on(device);
  if (!on.ok()) return fail(slimecclUnhandledDeviceError, "side stream: GPU {} cannot be made current", device);
  CaptureModeRelaxed relaxed;
  cudaStream_t cuda;
  cudaEvent_t forked, joined;
  if (const cudaError_t rc = cudaStreamCreateWithFlags(&cuda, cudaStreamNonBlocking); rc != cudaSuccess)
    return sideFailure(rc, device, "cudaStreamCreateWithFlags");
  side->cuda_ = cuda;
  if (const cudaError_t rc = cudaEventCreateWithFlags(&forked, cudaEventDisableTiming); rc != cudaSuccess)
    return sideFailure(rc, device, "cudaEventCreateWithFlags");
  side->forked_ = forked;
  if (const cudaError_t rc = cudaEventCreateWithFlags(&joined, cudaEventDisableTiming); rc != cudaSuccess)
    return sideFailure(rc, device, "cudaEventCreateWithFlags");
  side->joined_ = joined;
  SLIMECCL_CHECK(streamCreateFromCuda(cuda, &side->stream_));
  *out = std::move(side);
  return slimecclSuccess;
}

SideStream::~SideStream() {
  if (stream_ != nullptr) streamDestroy(stream_);
  OnDevice on(device_);
  if (forked_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(forked_));
  if (joined_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(joined_));
  if (cuda_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(cuda_));
}

// An event records the stream's state when recorded, and a wait takes the state of the record
// before it: one event per direction serves every fork and join, recorded and waited in turn
// under the caller's lock.
slimecclResult_t SideStream::waitFor(void* cudaStream) {
  OnDevice on(device_);
  SIDE_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(forked_), static_cast<cudaStream_t>(cudaStream)),
             "cudaEventRecord on the caller's stream");
  SIDE_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(cuda_), static_cast<cudaEvent_t>(forked_), 0),
             "cudaStreamWaitEvent");
  return slimecclSuccess;
}

slimecclResult_t SideStream::joinInto(void* cudaStream) {
  OnDevice on(device_);
  SIDE_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(joined_), static_cast<cudaStream_t>(cuda_)), "cudaEventRecord");
  SIDE_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(cudaStream), static_cast<cudaEvent_t>(joined_), 0),
             "cudaStreamWaitEvent on the caller's stream");
  return slimecclSuccess;
}

#else

namespace {
slimecclResult_t withoutCuda(int device) {
  return fail(slimecclInvalidUsage, "side stream on GPU {}: the library was built without CUDA", device);
}
}  // namespace

slimecclResult_t SideStream::create(int device, std::unique_ptr<SideStream>*) { return withoutCuda(device); }
SideStream::~SideStream() = default;
slimecclResult_t SideStream::waitFor(void*) { return withoutCuda(device_); }
slimecclResult_t SideStream::joinInto(void*) { return withoutCuda(device_); }

#endif

}  // namespace slimeccl
