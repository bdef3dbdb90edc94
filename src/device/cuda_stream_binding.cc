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

// The wait words of every binding in the process (two each), one cache line each, from slabs of
// pinned host memory. The first slab is made with the first binding, before any op of the process
// can hold a GPU stream; pinning later could wait on such streams.
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
  static constexpr size_t kFlagsPerSlab = 1024;
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
cudaEvent_t asEvent(void* event) { return static_cast<cudaEvent_t>(event); }

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
  OnDevice on(device_);
  for (void* event : {forked_, joined_[0], joined_[1], bayFreed_[0], bayFreed_[1], bayFreed_[2]})
    if (event != nullptr) cudaEventDestroy(asEvent(event));
  for (void* lane : lanes_)
    if (lane != nullptr) cudaStreamDestroy(asStream(lane));
  cudaGetLastError();
}

void* CudaStreamBinding::laneStream(Lane lane) const {
  if (lane == Lane::Caller) return stream_ != nullptr ? stream_ : cudaStreamLegacy;
  return lanes_[lane == Lane::In ? 0 : 1];
}

slimecclResult_t CudaStreamBinding::queuePoint(Lane lane, uint32_t* point) {
  OnDevice on(device_);
  MemOpBatch batch;
  batch.write(reachedOnDevice_, lastPoint_ + 1);
  SLIMECCL_CHECK(batch.enqueue(laneStream(lane)));
  *point = ++lastPoint_;
  return slimecclSuccess;
}

slimecclResult_t CudaStreamBinding::queueWaitForRelease(Lane lane, uint32_t point) {
  OnDevice on(device_);
  MemOpBatch batch;
  batch.waitAtLeast(releasedOnDevice_, point);
  return batch.enqueue(laneStream(lane));
}

slimecclResult_t CudaStreamBinding::fork() {
  OnDevice on(device_);
  if (forked_ == nullptr) {
    // Made on the caller's thread, like everything else the group needs of CUDA.
    for (void*& lane : lanes_) {
      cudaStream_t made = nullptr;
      CUDA_CHECK(cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking), "creating a copy stream");
      lane = made;
    }
    for (void** event : {&joined_[0], &joined_[1], &bayFreed_[0], &bayFreed_[1], &bayFreed_[2], &forked_}) {
      cudaEvent_t made = nullptr;
      CUDA_CHECK(cudaEventCreateWithFlags(&made, cudaEventDisableTiming), "creating an event");
      *event = made;
    }
  }
  CUDA_CHECK(cudaEventRecord(asEvent(forked_), asStream(laneStream(Lane::Caller))), "forking its copy streams");
  for (void* lane : lanes_)
    CUDA_CHECK(cudaStreamWaitEvent(asStream(lane), asEvent(forked_), 0), "forking its copy streams");
  return slimecclSuccess;
}

slimecclResult_t CudaStreamBinding::join() {
  OnDevice on(device_);
  for (int i = 0; i < 2; ++i) {
    CUDA_CHECK(cudaEventRecord(asEvent(joined_[i]), asStream(lanes_[i])), "joining its copy streams");
    CUDA_CHECK(cudaStreamWaitEvent(asStream(laneStream(Lane::Caller)), asEvent(joined_[i]), 0),
               "joining its copy streams");
  }
  return slimecclSuccess;
}

slimecclResult_t CudaStreamBinding::queueBayFreed(int bay) {
  OnDevice on(device_);
  CUDA_CHECK(cudaEventRecord(asEvent(bayFreed_[bay]), asStream(laneStream(Lane::Out))), "marking a bay free");
  return slimecclSuccess;
}

slimecclResult_t CudaStreamBinding::queueWaitForBay(int bay) {
  OnDevice on(device_);
  CUDA_CHECK(cudaStreamWaitEvent(asStream(laneStream(Lane::In)), asEvent(bayFreed_[bay]), 0), "waiting for a bay");
  return slimecclSuccess;
}

bool CudaStreamBinding::awaitPoint(uint32_t point, const std::function<bool()>& giveUp) const {
  // A short spin for ops that follow each other closely, then sleeps that grow to 50 us: the
  // stream may be busy with the application's kernels for a long time.
  const auto reached = [&] { return static_cast<int32_t>(__atomic_load_n(reached_, __ATOMIC_ACQUIRE) - point) >= 0; };
  for (int spin = 0; spin < 2000; ++spin)
    if (reached()) return true;
  for (unsigned sleepUs = 1; !reached(); sleepUs = std::min(2 * sleepUs, 50u)) {
    if (giveUp()) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(sleepUs));
  }
  return true;
}

void CudaStreamBinding::release(uint32_t point) {
  // Only forward: a group that failed releases its last point at once, and a point before it must
  // not take the word back. The GPU reads the word from host memory: a release store makes the
  // round's results in staging visible to the copies out that it lets go.
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
slimecclResult_t CudaStreamBinding::queuePoint(Lane, uint32_t*) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
slimecclResult_t CudaStreamBinding::queueWaitForRelease(Lane, uint32_t) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
slimecclResult_t CudaStreamBinding::fork() { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }
slimecclResult_t CudaStreamBinding::join() { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }
slimecclResult_t CudaStreamBinding::queueBayFreed(int) { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }
slimecclResult_t CudaStreamBinding::queueWaitForBay(int) { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }
void* CudaStreamBinding::laneStream(Lane) const { return stream_; }
bool CudaStreamBinding::awaitPoint(uint32_t, const std::function<bool()>&) const { return false; }
void CudaStreamBinding::release(uint32_t) {}
slimecclResult_t CudaStreamBinding::synchronize() { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }
bool CudaStreamBinding::idle() { return true; }

#endif

}  // namespace slimeccl
