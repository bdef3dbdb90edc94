// The GPU's side of GPUDirect RDMA: whether a GPU lets a NIC reach its memory (and by dmabuf),
// its PCI address for the topology, the device memory access the net modules are handed, and
// the flush that makes a NIC's writes visible to later GPU work. CUDA-free: the core includes it.
#pragma once

#include <string>

#include "include/slimeccl.h"
#include "net/net.h"

namespace slimeccl {

struct GpuRdmaFacts {
  bool present = false;  // the GPU can be used here
  // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, and the host may flush a NIC's writes
  // (CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST): received bytes are then visible to later work
  bool rdma = false;
  bool dmabuf = false;  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
  std::string busId;    // "0000:17:00.0", lower case; "" where unknown
  std::string why;      // where not present: the reason
};

GpuRdmaFacts gpuRdmaFacts(int device);

// Device memory as the net modules reach it: cudaPointerGetAttributes, cuMemGetHandleForAddressRange
// (a dmabuf), cudaMemcpy.
const DeviceMemoryAccess& cudaDeviceMemory();

// Returns once the work queued on the legacy default stream of GPU `device` so far is done: before
// a NIC reads device memory that an op on the NULL stream or a host stream reads.
slimecclResult_t awaitLegacyStream(int device);

// Makes the writes a NIC made into the memory of GPU `device` visible to work queued after this
// call (cudaDeviceFlushGPUDirectRDMAWrites); a sentence where the GPU refuses.
slimecclResult_t flushRdmaWrites(int device);

}  // namespace slimeccl
