// Row-major GEMMs as the library's GEMM-overlap ops run them on device buffers: cuBLASLt with the
// algorithm its heuristics rank first for the shape, the pointers' alignments and a 32 MiB
// workspace. The perf tools time them as the sequential baseline, and the tests compare the
// library's C with them bit for bit. Each shape asks the heuristics once (a timed call then pays
// only its launch, as the library's does). Throws std::runtime_error on a cuBLASLt failure.
#pragma once

#include <cublasLt.h>
#include <slimeccl.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>

namespace slimeccl_perf {

class LtGemm {
 public:
  // On the current GPU; tf32: float GEMMs take TF32 tensor cores (SLIMECCL_GEMM_TF32=1's choice).
  LtGemm(slimecclDataType_t type, bool tf32);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Queues out[rows x n] = a[rows x k] x b[k x n] on `stream` (rows, n or k may be 0).
  void multiply(size_t rows, size_t k, size_t n, const void* a, const void* b, void* out, cudaStream_t stream);

 private:
  // rows, k, n and the alignments of a, b and out.
  using Key = std::tuple<size_t, size_t, size_t, uint32_t, uint32_t, uint32_t>;
  struct Plan {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t b, a, out;
    cublasLtMatmulAlgo_t algo;
  };
  const Plan& planFor(const Key& key);

  slimecclDataType_t type_;
  bool tf32_;
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  std::map<Key, Plan> plans_;
};

}  // namespace slimeccl_perf
