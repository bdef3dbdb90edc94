#include "src/device/gpu.h"

#include <string>
#include <vector>

#include "src/device/driver_entry.h"
#include "src/base/error.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

namespace {

struct Presence {
  bool present = false;
  std::string absence;
  int count = 0;
};

const Presence& presence() {
  static const Presence once = [] {
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
      cudaGetLastError();  // not sticky: later calls must not report it
      return Presence{false, fmt::format("no usable CUDA device here ({})", cudaGetErrorString(rc))};
    }
    if (count == 0) return Presence{false, "no CUDA device here"};
    return Presence{true, "", count};
  }();
  return once;
}

// The calling thread's non-blocking stream on each GPU it has copied for, gone with the thread.
class CopyStreams {
 public:
  ~CopyStreams() {
    for (cudaStream_t stream : streams_)
      if (stream != nullptr) cudaStreamDestroy(stream);
  }
  cudaError_t get(int device, cudaStream_t* out) {
    if (static_cast<size_t>(device) >= streams_.size()) streams_.resize(static_cast<size_t>(device) + 1, nullptr);
    cudaStream_t& stream = streams_[static_cast<size_t>(device)];
    if (stream == nullptr) {
      const cudaError_t rc = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
      if (rc != cudaSuccess) return rc;
    }
    *out = stream;
    return cudaSuccess;
  }

 private:
  std::vector<cudaStream_t> streams_;
};

// Staging is pageable memory: an asynchronous copy from it may return before the bytes land, so
// every copy ends with its stream synchronized.
cudaError_t copyOn(void* dst, const void* src, size_t bytes, int device, CopyOrder order) {
  thread_local CopyStreams streams;
  cudaStream_t stream = cudaStreamLegacy;
  if (order == CopyOrder::Unordered) {
    const cudaError_t rc = streams.get(device, &stream);
    if (rc != cudaSuccess) return rc;
  }
  const cudaError_t rc = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
  return rc != cudaSuccess ? rc : cudaStreamSynchronize(stream);
}

}  // namespace

bool gpuPresent() { return presence().present; }

int gpuCount() { return presence().count; }

const char* gpuAbsence() { return presence().absence.c_str(); }

int gpuInUse() {
  static const auto getCurrent = driverFunction<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent", 4000);
  static const auto primaryState =
      driverFunction<PFN_cuDevicePrimaryCtxGetState_v7000>("cuDevicePrimaryCtxGetState", 7000);
  if (!gpuPresent()) return -1;
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  // A context current on the thread, or the current GPU's primary context made (cudaSetDevice
  // makes it, and may leave it to the first call that needs it to become current).
  CUcontext context = nullptr;
  if (getCurrent != nullptr && getCurrent(&context) == CUDA_SUCCESS && context != nullptr) return device;
  unsigned int flags = 0;
  int active = 0;
  if (primaryState != nullptr && primaryState(static_cast<CUdevice>(device), &flags, &active) == CUDA_SUCCESS &&
      active != 0)
    return device;
  return -1;
}

bool isDeviceMemory(const void* p, int* device) {
  if (p == nullptr || !gpuPresent()) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (attributes.type != cudaMemoryTypeDevice) return false;
  if (device != nullptr) *device = attributes.device;
  return true;
}

bool kernelReaches(const void* p, int device) {
  if (p == nullptr || !gpuPresent()) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice: return attributes.device == device;
    case cudaMemoryTypeManaged: return true;
    case cudaMemoryTypeHost: return attributes.devicePointer == p;
    default: return false;
  }
}

bool deviceAllocation(const void* p, const char** base, size_t* bytes) {
  static const auto getRange = driverFunction<PFN_cuMemGetAddressRange_v3020>("cuMemGetAddressRange", 3020);
  if (!isDeviceMemory(p) || getRange == nullptr) return false;
  CUdeviceptr start = 0;
  size_t size = 0;
  if (getRange(&start, &size, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return false;
  *base = reinterpret_cast<const char*>(start);
  *bytes = size;
  return true;
}

bool keepDevice(int device) {
  if (cudaSetDevice(device) == cudaSuccess) return true;
  cudaGetLastError();
  return false;
}

OnDevice::OnDevice(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) {
    ok_ = false;
  } else if (previous_ != device) {
    switched_ = ok_ = cudaSetDevice(device) == cudaSuccess;
  }
  if (!ok_) cudaGetLastError();
}

OnDevice::~OnDevice() {
  if (switched_) cudaSetDevice(previous_);
}

slimecclResult_t gpuCopy(void* dst, const void* src, size_t bytes, int device, CopyOrder order) {
  OnDevice on(device);
  const cudaError_t rc = on.ok() ? copyOn(dst, src, bytes, device, order) : cudaErrorInvalidDevice;
  if (rc != cudaSuccess) {
    cudaGetLastError();
    return fail(slimecclUnhandledDeviceError, "copying {} bytes between host memory and GPU {} failed: {}", bytes,
                device, cudaGetErrorString(rc));
  }
  return slimecclSuccess;
}

slimecclResult_t waitForQueuedWork(void* cudaStream, int device) {
  OnDevice on(device);
  cudaEvent_t done = nullptr;
  cudaError_t rc = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  if (rc == cudaSuccess) rc = cudaEventRecord(done, static_cast<cudaStream_t>(cudaStream));
  if (rc == cudaSuccess) rc = cudaEventSynchronize(done);
  if (done != nullptr) cudaEventDestroy(done);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    return fail(slimecclUnhandledDeviceError, "waiting for the work queued on a CUDA stream of GPU {} failed: {}",
                device, cudaGetErrorString(rc));
  }
  return slimecclSuccess;
}

bool isCapturing(void* cudaStream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(cudaStream), &status) != cudaSuccess) cudaGetLastError();
  return status != cudaStreamCaptureStatusNone;
}

CaptureModeRelaxed::CaptureModeRelaxed() {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  previous_ = static_cast<int>(mode);
}
CaptureModeRelaxed::~CaptureModeRelaxed() {
  cudaStreamCaptureMode mode = static_cast<cudaStreamCaptureMode>(previous_);
  cudaThreadExchangeStreamCaptureMode(&mode);
}

#else

bool gpuPresent() { return false; }

int gpuCount() { return 0; }

int gpuInUse() { return -1; }

const char* gpuAbsence() {
  return "this build of slimeccl has no CUDA support (configure with SLIMECCL_WITH_CUDA=ON where the CUDA toolkit "
         "is installed)";
}

bool isDeviceMemory(const void*, int*) { return false; }

bool kernelReaches(const void*, int) { return false; }

bool deviceAllocation(const void*, const char**, size_t*) { return false; }

bool keepDevice(int) { return false; }
OnDevice::OnDevice(int) : ok_(false) {}
OnDevice::~OnDevice() = default;
slimecclResult_t waitForQueuedWork(void*, int) {
  return fail(slimecclInvalidUsage, "waiting for a CUDA stream: {}", gpuAbsence());
}
bool isCapturing(void*) { return false; }
CaptureModeRelaxed::CaptureModeRelaxed() = default;
CaptureModeRelaxed::~CaptureModeRelaxed() = default;

slimecclResult_t gpuCopy(void*, const void*, size_t bytes, int, CopyOrder) {
  return fail(slimecclInvalidUsage, "copying {} bytes to or from device memory: {}", bytes, gpuAbsence());
}

#endif

}  // namespace slimeccl
