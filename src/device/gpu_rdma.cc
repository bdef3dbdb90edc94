#include "src/device/gpu_rdma.h"

#include <algorithm>
#include <cctype>

#include "src/device/driver_entry.h"
#include "src/device/gpu.h"
#include "src/base/error.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#endif

namespace slimeccl {

#ifdef SLIMECCL_HAVE_CUDA

namespace {

int attribute(CUdevice_attribute which, int device) {
  static const auto getAttribute = driverFunction<PFN_cuDeviceGetAttribute_v2000>("cuDeviceGetAttribute", 2000);
  int value = 0;
  return getAttribute != nullptr && getAttribute(&value, which, device) == CUDA_SUCCESS ? value : 0;
}

class CudaDeviceMemory final : public DeviceMemoryAccess {
 public:
  bool isDeviceMemory(const void* data) const override { return slimeccl::isDeviceMemory(data); }

  slimecclResult_t dmabufOf(uintptr_t start, size_t bytes, int* fd, uint64_t* offset) const override {
    static const auto getHandle =
        driverFunction<PFN_cuMemGetHandleForAddressRange_v11070>("cuMemGetHandleForAddressRange", 11070);
    if (getHandle == nullptr)
      return fail(slimecclSystemError, "the CUDA driver has no cuMemGetHandleForAddressRange (dmabuf export)");
    int handle = -1;
    const CUresult rc =
        getHandle(&handle, static_cast<CUdeviceptr>(start), bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (rc != CUDA_SUCCESS) {
      const char* name = nullptr;
      static const auto errorName = driverFunction<PFN_cuGetErrorName_v6000>("cuGetErrorName", 6000);
      if (errorName != nullptr) errorName(rc, &name);
      return fail(slimecclSystemError, "the GPU exports no dmabuf for {} bytes at {:#x}: {}", bytes, start,
                  name != nullptr ? name : "CUDA error");
    }
    *fd = handle;
    *offset = 0;
    return slimecclSuccess;
  }

  // On a non-blocking stream of the buffer's GPU: the legacy default stream would wait for
  // blocking streams that may wait for this very op (a CUDA-ordered op's stream waits for it).
  slimecclResult_t copy(void* dst, const void* src, size_t bytes) const override {
    int device = -1;
    if (!slimeccl::isDeviceMemory(dst, &device) && !slimeccl::isDeviceMemory(src, &device))
      return fail(slimecclInternalError, "a copy for the net module touches no device memory");
    return gpuCopy(dst, src, bytes, device, CopyOrder::Unordered);
  }
};

}  // namespace

GpuRdmaFacts gpuRdmaFacts(int device) {
  GpuRdmaFacts facts;
  if (!gpuPresent()) {
    facts.why = gpuAbsence();
    return facts;
  }
  if (device < 0 || device >= gpuCount()) {
    facts.why = "the rank uses no GPU";
    return facts;
  }
  facts.present = true;
  facts.rdma = attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, device) != 0 &&
               (attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, device) &
                CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST) != 0;
  facts.dmabuf = attribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device) != 0;
  char busId[32] = {};
  if (cudaDeviceGetPCIBusId(busId, sizeof(busId), device) == cudaSuccess) {
    facts.busId = busId;
    std::transform(facts.busId.begin(), facts.busId.end(), facts.busId.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  }
  cudaGetLastError();
  return facts;
}

const DeviceMemoryAccess& cudaDeviceMemory() {
  static const CudaDeviceMemory memory;
  return memory;
}

slimecclResult_t awaitLegacyStream(int device) { return waitForQueuedWork(cudaStreamLegacy, device); }

slimecclResult_t flushRdmaWrites(int device) {
  OnDevice on(device);
  const cudaError_t rc = cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                                            cudaFlushGPUDirectRDMAWritesToOwner);
  if (rc == cudaSuccess) return slimecclSuccess;
  cudaGetLastError();
  return fail(slimecclUnhandledDeviceError, "flushing the NIC's writes into GPU {} failed: {}", device,
              cudaGetErrorString(rc));
}

#else

namespace {

class NoDeviceMemory final : public DeviceMemoryAccess {
 public:
  bool isDeviceMemory(const void*) const override { return false; }
  slimecclResult_t dmabufOf(uintptr_t, size_t, int*, uint64_t*) const override {
    return fail(slimecclInvalidUsage, "{}", gpuAbsence());
  }
  slimecclResult_t copy(void*, const void*, size_t) const override {
    return fail(slimecclInvalidUsage, "{}", gpuAbsence());
  }
};

}  // namespace

GpuRdmaFacts gpuRdmaFacts(int) {
  GpuRdmaFacts facts;
  facts.why = gpuAbsence();
  return facts;
}

const DeviceMemoryAccess& cudaDeviceMemory() {
  static const NoDeviceMemory memory;
  return memory;
}

slimecclResult_t awaitLegacyStream(int) { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }

slimecclResult_t flushRdmaWrites(int) { return fail(slimecclInvalidUsage, "{}", gpuAbsence()); }

#endif

}  // namespace slimeccl
