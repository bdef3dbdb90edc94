#include "lt_gemm.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace slimeccl_perf {
namespace {

constexpr uint64_t kWorkspaceBytes = uint64_t{32} << 20;

void check(cublasStatus_t rc, const char* what) {
  if (rc != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cublasLtGetStatusString(rc));
}

void cudaCheck(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

cudaDataType_t cudaTypeOf(slimecclDataType_t type) {
  switch (type) {
    case slimecclBfloat16: return CUDA_R_16BF;
    case slimecclFloat16: return CUDA_R_16F;
    case slimecclFloat64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

size_t sizeOf(slimecclDataType_t type) { return type == slimecclFloat64 ? 8 : type == slimecclFloat32 ? 4 : 2; }

// The largest power of two, at most 256, dividing `p`.
uint32_t alignmentOf(const void* p) {
  uint32_t alignment = 1;
  while (alignment < 256 && reinterpret_cast<uintptr_t>(p) % (2 * alignment) == 0) alignment *= 2;
  return alignment;
}

}  // namespace

LtGemm::LtGemm(slimecclDataType_t type, bool tf32) : type_(type), tf32_(tf32) {
  check(cublasLtCreate(&handle_), "cublasLtCreate");
  cudaCheck(cudaMalloc(&workspace_, kWorkspaceBytes), "cudaMalloc of cuBLASLt's workspace");
}

LtGemm::~LtGemm() {
  for (auto& [key, plan] : plans_) {
    cublasLtMatrixLayoutDestroy(plan.out);
    cublasLtMatrixLayoutDestroy(plan.a);
    cublasLtMatrixLayoutDestroy(plan.b);
    cublasLtMatmulDescDestroy(plan.desc);
  }
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

void LtGemm::multiply(size_t rows, size_t k, size_t n, const void* a, const void* b, void* out, cudaStream_t stream) {
  if (rows == 0 || n == 0) return;
  if (k == 0) {
    cudaCheck(cudaMemsetAsync(out, 0, rows * n * sizeOf(type_), stream), "cudaMemsetAsync");
    return;
  }
  const Plan& plan = planFor(Key{rows, k, n, alignmentOf(a), alignmentOf(b), alignmentOf(out)});
  const bool dbl = type_ == slimecclFloat64;
  const float oneF = 1, zeroF = 0;
  const double oneD = 1, zeroD = 0;
  check(cublasLtMatmul(handle_, plan.desc, dbl ? static_cast<const void*>(&oneD) : &oneF, b, plan.b, a, plan.a,
                       dbl ? static_cast<const void*>(&zeroD) : &zeroF, out, plan.out, out, plan.out, &plan.algo,
                       workspace_, kWorkspaceBytes, stream),
        "cublasLtMatmul");
}

const LtGemm::Plan& LtGemm::planFor(const Key& key) {
  if (auto found = plans_.find(key); found != plans_.end()) return found->second;
  const auto [rows, k, n, alignA, alignB, alignOut] = key;
  // Row-major out = a x b is column-major out^T = b^T x a^T.
  const bool dbl = type_ == slimecclFloat64;
  const cublasComputeType_t compute = dbl     ? CUBLAS_COMPUTE_64F
                                      : tf32_ ? CUBLAS_COMPUTE_32F_FAST_TF32
                                              : CUBLAS_COMPUTE_32F;
  const cudaDataType_t type = cudaTypeOf(type_);
  Plan plan{};
  check(cublasLtMatmulDescCreate(&plan.desc, compute, dbl ? CUDA_R_64F : CUDA_R_32F), "cublasLtMatmulDescCreate");
  check(cublasLtMatrixLayoutCreate(&plan.b, type, n, k, n), "cublasLtMatrixLayoutCreate");
  check(cublasLtMatrixLayoutCreate(&plan.a, type, k, rows, k), "cublasLtMatrixLayoutCreate");
  check(cublasLtMatrixLayoutCreate(&plan.out, type, n, rows, n), "cublasLtMatrixLayoutCreate");
  cublasLtMatmulPreference_t preference;
  check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  const struct {
    cublasLtMatmulPreferenceAttributes_t attribute;
    const void* value;
    size_t size;
  } preferences[] = {
      {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kWorkspaceBytes, sizeof(kWorkspaceBytes)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignB, sizeof(alignB)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignA, sizeof(alignA)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignOut, sizeof(alignOut)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignOut, sizeof(alignOut)},
  };
  for (const auto& p : preferences)
    check(cublasLtMatmulPreferenceSetAttribute(preference, p.attribute, p.value, p.size),
          "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  check(cublasLtMatmulAlgoGetHeuristic(handle_, plan.desc, plan.b, plan.a, plan.out, plan.out, preference, 1, &best,
                                       &found),
        "cublasLtMatmulAlgoGetHeuristic");
  cublasLtMatmulPreferenceDestroy(preference);
  if (found == 0) throw std::runtime_error("cuBLASLt's heuristics offered no algorithm");
  plan.algo = best.algo;
  return plans_.emplace(key, plan).first->second;
}

}  // namespace slimeccl_perf
