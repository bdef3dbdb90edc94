// cuBLASLt for the GEMM-overlap ops on device buffers: one handle per communicator on its GPU, with
// its own workspace (so neither a call nor a captured graph makes cuBLASLt allocate), the plan
// cuBLASLt's heuristics chose for each shape (src/device/gemm_plans.h), and the device memory that
// receives the gathered A when the caller gives none. CUDA-free: built without CUDA, create fails
// with a sentence.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "include/slimeccl.h"

namespace slimeccl {

struct CublasLtCalls;
class GemmPlans;

// C[M x N] = A[M x K] x B[K x N], row-major, M = nranks x mLocal, one row block per rank.
struct DeviceGemmShape {
  slimecclDataType_t type;
  size_t mLocal, n, k;
  const void* b;
  void* c;
};

// The datatypes cuBLASLt multiplies here: bfloat16 and float16 (accumulating in float), float and double.
bool deviceGemmTakes(slimecclDataType_t type);

class DeviceGemm {
 public:
  // On `device` (the comm's GPU); tf32: float GEMMs may use TF32 tensor cores (SLIMECCL_GEMM_TF32).
  // `what` names the op in a sentence.
  static slimecclResult_t create(int rank, int device, bool tf32, const char* what, std::unique_ptr<DeviceGemm>* out);
  ~DeviceGemm();
  DeviceGemm(const DeviceGemm&) = delete;
  DeviceGemm& operator=(const DeviceGemm&) = delete;

  int device() const { return device_; }

  // Queues on `cudaStream` the GEMM of row block `block`: its mLocal rows of A, at `a`, times B
  // into the block's rows of C. `what` names the op in a sentence.
  slimecclResult_t multiplyRowBlock(const DeviceGemmShape& shape, int block, const void* a, void* cudaStream,
                                    const char* what);
  // Queues on `cudaStream` out[rows x N] = a[rows x K] x shape.b, row-major (shape.mLocal and
  // shape.c are not read).
  slimecclResult_t multiplyRows(const DeviceGemmShape& shape, size_t rows, const void* a, void* out, void* cudaStream,
                                const char* what);
  // Device memory of at least `bytes` for the gathered A (AllGatherGemm) or for the partial
  // products (GemmReduceScatter). Earlier, smaller ones stay until the comm ends (work already
  // queued, or a captured graph, may still use them); each new one is at least twice the last, so
  // together they stay within twice the largest.
  enum class Workspace { kGatheredA, kPartialProducts };
  slimecclResult_t workspace(Workspace which, size_t bytes, void** out);

 private:
  DeviceGemm() = default;

  int rank_ = 0, device_ = 0;
  bool tf32_ = false;
  std::mutex mutex_;                   // one GEMM queued at a time; guards plans_ and the workspaces
  const CublasLtCalls* lt_ = nullptr;  // the calls it was made with (loaded at run time)
  void* handle_ = nullptr;             // cublasLtHandle_t
  void* workspace_ = nullptr;          // device memory, cuBLASLt's
  std::unique_ptr<GemmPlans> plans_;
  struct Grown {
    std::vector<void*> buffers;  // device memory, the largest last, `bytes` long
    size_t bytes = 0;
  };
  Grown gathered_, partials_;
};

}  // namespace slimeccl
