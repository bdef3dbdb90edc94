// cuBLAS for AllGatherGemm on device buffers: one handle per communicator on its GPU, with its own
// cuBLAS workspace (so neither a call nor a captured graph makes cuBLAS allocate), and the device
// memory that receives the gathered A when the caller gives none. CUDA-free: built without CUDA,
// create fails with a sentence.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "include/slimeccl.h"

namespace slimeccl {

struct CublasCalls;

// C[M x N] = A[M x K] x B[K x N], row-major, M = nranks x mLocal, one row block per rank.
struct DeviceGemmShape {
  slimecclDataType_t type;
  size_t mLocal, n, k;
  const void* b;
  void* c;
};

// The datatypes cuBLAS multiplies here: bfloat16 and float16 (accumulating in float), float and double.
bool deviceGemmTakes(slimecclDataType_t type);

class DeviceGemm {
 public:
  // On `device` (the comm's GPU); tf32: float GEMMs may use TF32 tensor cores (SLIMECCL_GEMM_TF32).
  static slimecclResult_t create(int rank, int device, bool tf32, std::unique_ptr<DeviceGemm>* out);
  ~DeviceGemm();
  DeviceGemm(const DeviceGemm&) = delete;
  DeviceGemm& operator=(const DeviceGemm&) = delete;

  int device() const { return device_; }

  // Queues on `cudaStream` the GEMM of row block `block`: its mLocal rows of A, at `a`, times B
  // into the block's rows of C. `what` names the op in a sentence.
  slimecclResult_t multiplyRowBlock(const DeviceGemmShape& shape, int block, const void* a, void* cudaStream,
                                    const char* what);
  // Device memory of at least `bytes` for the gathered A. Earlier, smaller ones stay until the comm
  // ends (work already queued, or a captured graph, may still write into them); each new one is at
  // least twice the last, so together they stay within twice the largest.
  slimecclResult_t gatheredWorkspace(size_t bytes, void** out);

 private:
  DeviceGemm() = default;

  int rank_ = 0, device_ = 0;
  bool tf32_ = false;
  std::mutex mutex_;                     // the handle's stream and workspace are set per call
  const CublasCalls* cublas_ = nullptr;  // the calls it was made with (loaded at run time)
  void* handle_ = nullptr;               // cublasHandle_t
  void* cublasWorkspace_ = nullptr;      // device memory
  std::vector<void*> gathered_;          // device memory, the largest last, gatheredBytes_ long
  size_t gatheredBytes_ = 0;
};

}  // namespace slimeccl
