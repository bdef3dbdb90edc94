#include "src/device/cuda_stream_binding.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "src/device/driver_entry.h"
#include "src/device/gpu.h"
#include "src/device/line_protocol.h"
#include "src/device/reduce_kernel.h"
#include "src/device/sm_copy.h"
#include "src/device/stream_memops.h"
#include "src/base/error.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

namespace {

slimecclResult_t cudaFailure(cudaError_t rc, const char* what) {
  cudaGetLastError();
  return fail(slimecclUnhandledDeviceError, "CUDA-ordered stream: {} failed: {}", what, cudaGetErrorString(rc));
}

#define CUDA_CHECK(call, what)                                       \
  do {                                                               \
    const cudaError_t cuda_rc_ = (call);                             \
    if (cuda_rc_ != cudaSuccess) return cudaFailure(cuda_rc_, what); \
  } while (0)

// The wait flags of every binding in the process, one cache line each, from slabs of pinned host
// memory. The first slab is made with the first binding, before any op of the process can hold
// a GPU stream; pinning later could wait on such streams.
class WaitFlags {
 public:
  static WaitFlags& instance() {
    static WaitFlags* flags = new WaitFlags();  // never destroyed: bindings may outlive statics
    return *flags;
  }

  slimecclResult_t take(uint32_t** flag, uint64_t* onDevice) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) SLIMECCL_CHECK(addSlab());
    *flag = free_.back().first;
    *onDevice = free_.back().second;
    free_.pop_back();
    __atomic_store_n(*flag, 0u, __ATOMIC_RELEASE);
    return slimecclSuccess;
  }

  void give(uint32_t* flag, uint64_t onDevice) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.emplace_back(flag, onDevice);
  }

 private:
  static constexpr size_t kFlagsPerSlab = 256;
  static constexpr size_t kFlagStride = 64 / sizeof(uint32_t);

  slimecclResult_t addSlab() {
    void* slab = nullptr;
    CUDA_CHECK(cudaHostAlloc(&slab, kFlagsPerSlab * kFlagStride * sizeof(uint32_t),
                             cudaHostAllocMapped | cudaHostAllocPortable),
               "allocating wait flags in pinned host memory");
    void* onDevice = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&onDevice, slab, 0), "mapping the wait flags for the GPU");
    for (size_t i = 0; i < kFlagsPerSlab; ++i)
      free_.emplace_back(static_cast<uint32_t*>(slab) + i * kFlagStride,
                         reinterpret_cast<uint64_t>(onDevice) + i * kFlagStride * sizeof(uint32_t));
    return slimecclSuccess;
  }

  std::mutex mutex_;
  std::vector<std::pair<uint32_t*, uint64_t>> free_;
};

cudaStream_t asStream(void* stream) { return static_cast<cudaStream_t>(stream); }

}  // namespace

slimecclResult_t CudaStreamBinding::create(void* cudaStream, std::unique_ptr<CudaStreamBinding>* out) {
  if (!gpuPresent()) return fail(slimecclInvalidUsage, "StreamCreateFromCuda: {}", gpuAbsence());
  if (!streamMemOpsAvailable())
    return fail(slimecclUnhandledDeviceError,
                "StreamCreateFromCuda: the CUDA driver offers no stream memory operations (cuStreamBatchMemOp), which "
                "ordering host ops in a CUDA stream needs");
  std::unique_ptr<CudaStreamBinding> binding(new CudaStreamBinding());
  binding->stream_ = cudaStream;
  // A stream first seen while it is being captured (PyTorch captures on a stream of its own): the
  // calls below must not end the capture, whatever its mode. Asking a capturing stream for its
  // GPU would: such a stream is taken to be the current GPU's, as the NCCL library makes the comm's
  // GPU current for it.
  CaptureModeRelaxed relaxed;
  if (isCapturing(cudaStream) || cudaStreamGetDevice(asStream(cudaStream), &binding->device_) != cudaSuccess) {
    cudaGetLastError();
    CUDA_CHECK(cudaGetDevice(&binding->device_), "finding the GPU of the stream");
  }
  OnDevice on(binding->device_);
  // Loaded before any op of ours is queued: loading may wait for the GPU to idle (sm_copy.h).
  loadSmCopyKernel(binding->device_);
  loadReduceKernels(binding->device_);
  loadLineKernels(binding->device_);
  SLIMECCL_CHECK(WaitFlags::instance().take(&binding->reached_, &binding->reachedOnDevice_));
  if (const slimecclResult_t rc = WaitFlags::instance().take(&binding->released_, &binding->releasedOnDevice_);
      rc != slimecclSuccess)
    return rc;
  *out = std::move(binding);
  return slimecclSuccess;
}

CudaStreamBinding::~CudaStreamBinding() {
  // The stream may still write a point or copy: its words and staging are used again, or freed,
  // only once it is idle.
  if (!idle()) return;
  if (reached_ != nullptr) WaitFlags::instance().give(reached_, reachedOnDevice_);
  if (released_ != nullptr) WaitFlags::instance().give(released_, releasedOnDevice_);
  for (char* staging : wholeOpStaging_) cudaFreeHost(staging);
  cudaGetLastError();
}

slimecclResult_t CudaStreamBinding::wholeOpStaging(size_t bytes, char** out) {
  if (bytes > wholeOpStagingBytes_) {
    OnDevice on(device_);
    const size_t grown = std::max(bytes, 2 * wholeOpStagingBytes_);
    void* staging = nullptr;
    CUDA_CHECK(cudaHostAlloc(&staging, grown, cudaHostAllocPortable), "pinning host memory to stage ops in");
    wholeOpStaging_.push_back(static_cast<char*>(staging));
    wholeOpStagingBytes_ = grown;
  }
  *out = wholeOpStaging_.back();
  return slimecclSuccess;
}

slimecclResult_t CudaStreamBinding::queueCopy(void* dst, const void* src, size_t bytes) {
  OnDevice on(device_);
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, asStream(queueStream())),
             "queuing a copy to or from host staging");
  return slimecclSuccess;
}

slimecclResult_t CudaStreamBinding::queuePoint(uint32_t* point) {
  OnDevice on(device_);
  MemOpBatch batch;
  batch.write(reachedOnDevice_, lastPoint_ + 1);
  SLIMECCL_CHECK(batch.enqueue(stream_));
  *point = ++lastPoint_;
  return slimecclSuccess;
}

slimecclResult_t CudaStreamBinding::queueWaitForRelease(uint32_t point) {
  OnDevice on(device_);
  MemOpBatch batch;
  batch.waitAtLeast(releasedOnDevice_, point);
  return batch.enqueue(stream_);
}

void* CudaStreamBinding::queueStream() const { return stream_ != nullptr ? stream_ : cudaStreamLegacy; }

void CudaStreamBinding::awaitPoint(uint32_t point) const {
  // A short spin for ops that follow each other closely, then sleeps that grow to 50 us: the
  // stream may be busy with the application's kernels for a long time.
  const auto reached = [&] { return static_cast<int32_t>(__atomic_load_n(reached_, __ATOMIC_ACQUIRE) - point) >= 0; };
  for (int spin = 0; spin < 2000; ++spin)
    if (reached()) return;
  for (unsigned sleepUs = 1; !reached(); sleepUs = std::min(2 * sleepUs, 50u))
    std::this_thread::sleep_for(std::chrono::microseconds(sleepUs));
}

void CudaStreamBinding::release(uint32_t point) {
  // Only forward: the caller may release everything queued while the worker releases a point
  // before. The GPU reads the word from host memory: a release store makes the copies into staging
  // visible to the copies out that it lets go.
  uint32_t current = __atomic_load_n(released_, __ATOMIC_ACQUIRE);
  while (static_cast<int32_t>(point - current) > 0 &&
         !__atomic_compare_exchange_n(released_, &current, point, false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {}
}

slimecclResult_t CudaStreamBinding::synchronize() {
  OnDevice on(device_);
  CUDA_CHECK(cudaStreamSynchronize(asStream(stream_)), "synchronizing the CUDA stream");
  return slimecclSuccess;
}

bool CudaStreamBinding::idle() {
  OnDevice on(device_);
  const cudaError_t rc = cudaStreamQuery(asStream(stream_));
  if (rc != cudaSuccess && rc != cudaErrorNotReady) cudaGetLastError();
  return rc != cudaErrorNotReady;
}

#else

slimecclResult_t CudaStreamBinding::create(void*, std::unique_ptr<CudaStreamBinding>*) {
  return fail(slimecclInvalidUsage, "StreamCreateFromCuda: {}", gpuAbsence());
}

// Without CUDA no binding can be made, so none of these ever runs.
CudaStreamBinding::~CudaStreamBinding() = default;
slimecclResult_t CudaStreamBinding::queuePoint(uint32_t*) { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }
slimecclResult_t CudaStreamBinding::queueWaitForRelease(uint32_t) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
slimecclResult_t CudaStreamBinding::wholeOpStaging(size_t, char**) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
slimecclResult_t CudaStreamBinding::queueCopy(void*, const void*, size_t) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
void* CudaStreamBinding::queueStream() const { return stream_; }
void CudaStreamBinding::awaitPoint(uint32_t) const {}
void CudaStreamBinding::release(uint32_t) {}
slimecclResult_t CudaStreamBinding::synchronize() { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }
bool CudaStreamBinding::idle() { return true; }

#endif

}  // namespace slimeccl
