#include "src/device/cuda_stream_binding.h"

#include <mutex>
#include <vector>

#include "src/device/driver_entry.h"
#include "src/device/gpu.h"
#include "src/device/line_protocol.h"
#include "src/device/reduce_kernel.h"
#include "src/device/sm_copy.h"
#include "src/base/error.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

namespace {

PFN_cuStreamWaitValue32_v11070 streamWaitValue32() {
  static const auto fn = driverFunction<PFN_cuStreamWaitValue32_v11070>("cuStreamWaitValue32", 11070);
  return fn;
}

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
cudaEvent_t asEvent(void* event) { return static_cast<cudaEvent_t>(event); }

}  // namespace

slimecclResult_t CudaStreamBinding::create(void* cudaStream, std::unique_ptr<CudaStreamBinding>* out) {
  if (!gpuPresent()) return fail(slimecclInvalidUsage, "StreamCreateFromCuda: {}", gpuAbsence());
  if (streamWaitValue32() == nullptr)
    return fail(slimecclUnhandledDeviceError,
                "StreamCreateFromCuda: the CUDA driver offers no cuStreamWaitValue32, which ordering host ops in a "
                "CUDA stream needs");
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
  SLIMECCL_CHECK(WaitFlags::instance().take(&binding->flag_, &binding->flagOnDevice_));
  *out = std::move(binding);
  return slimecclSuccess;
}

CudaStreamBinding::~CudaStreamBinding() {
  OnDevice on(device_);
  for (void* event : events_) cudaEventDestroy(asEvent(event));
  if (flag_ != nullptr) WaitFlags::instance().give(flag_, flagOnDevice_);
  cudaGetLastError();
}

slimecclResult_t CudaStreamBinding::enqueue(Ticket* ticket) {
  OnDevice on(device_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!events_.empty()) {
      ticket->started = events_.back();
      events_.pop_back();
    }
  }
  if (ticket->started == nullptr) {
    cudaEvent_t event = nullptr;
    // Blocking sync: the worker sleeps while it waits for the GPU instead of spinning on a core.
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventBlockingSync), "creating an event");
    ticket->started = event;
  }
  slimecclResult_t rc = slimecclSuccess;
  const cudaError_t recorded = cudaEventRecord(asEvent(ticket->started), asStream(stream_));
  if (recorded != cudaSuccess) {
    rc = cudaFailure(recorded, "recording the start of a group");
  } else {
    const CUresult waited = streamWaitValue32()(reinterpret_cast<CUstream>(stream_), flagOnDevice_, nextValue_ + 1,
                                                CU_STREAM_WAIT_VALUE_GEQ);
    if (waited != CUDA_SUCCESS)
      rc = fail(slimecclUnhandledDeviceError, "CUDA-ordered stream: queuing the wait for a group failed (CUresult {})",
                static_cast<int>(waited));
  }
  if (rc != slimecclSuccess) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(ticket->started);
    return rc;
  }
  ticket->value = ++nextValue_;
  return slimecclSuccess;
}

slimecclResult_t CudaStreamBinding::waitForStart(const Ticket& ticket) {
  OnDevice on(device_);
  const cudaError_t rc = cudaEventSynchronize(asEvent(ticket.started));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(ticket.started);
  }
  if (rc != cudaSuccess) return cudaFailure(rc, "waiting for the work queued before a group");
  return slimecclSuccess;
}

void CudaStreamBinding::release(const Ticket& ticket) {
  // The GPU reads the flag from host memory: a release store makes the group's copies out visible
  // to the work that the flag lets go.
  __atomic_store_n(flag_, ticket.value, __ATOMIC_RELEASE);
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
slimecclResult_t CudaStreamBinding::enqueue(Ticket*) { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }
slimecclResult_t CudaStreamBinding::waitForStart(const Ticket&) {
  return fail(slimecclInvalidUsage, "{}", gpuAbsence());
}
void CudaStreamBinding::release(const Ticket&) {}
slimecclResult_t CudaStreamBinding::synchronize() { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }
bool CudaStreamBinding::idle() { return true; }

#endif

}  // namespace slimeccl
