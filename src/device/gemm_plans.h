// The cuBLASLt plan of each GEMM shape a communicator has run: its descriptors and the algorithm
// cuBLASLt's heuristics ranked first for that shape, the pointers' alignments and the workspace.
// Asking the heuristics costs tens of microseconds of host time, so a shape asks once. Device code
// only: it names cuBLASLt's types.
#pragma once

#ifdef SLIMECCL_HAVE_CUDA

#include <cublasLt.h>

#include <map>
#include <string>
#include <tuple>

#include "src/device/cublaslt_calls.h"

namespace slimeccl {

// Column-major D[m x n] = op(A)[m x k] x B[k x n], leading dimensions m, k and m, no transposes;
// alignments are the largest power of two (at most 256) dividing each pointer.
struct GemmPlanKey {
  cudaDataType_t type;
  cublasComputeType_t compute;
  int m, n, k;
  int alignA, alignB, alignD;
  bool operator<(const GemmPlanKey& o) const {
    return std::tie(type, compute, m, n, k, alignA, alignB, alignD) <
           std::tie(o.type, o.compute, o.m, o.n, o.k, o.alignA, o.alignB, o.alignD);
  }
};

struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

class GemmPlans {
 public:
  GemmPlans(const CublasLtCalls& lt, cublasLtHandle_t handle, size_t workspaceBytes)
      : lt_(lt), handle_(handle), workspaceBytes_(workspaceBytes) {}
  ~GemmPlans();
  GemmPlans(const GemmPlans&) = delete;
  GemmPlans& operator=(const GemmPlans&) = delete;

  // The plan of `key`, made on first use. On failure returns null with cuBLASLt's reason in *why.
  const GemmPlan* find(const GemmPlanKey& key, std::string* why);

 private:
  bool make(const GemmPlanKey& key, GemmPlan* plan, std::string* why);
  void destroy(GemmPlan* plan);

  const CublasLtCalls& lt_;
  cublasLtHandle_t handle_;
  size_t workspaceBytes_;
  std::map<GemmPlanKey, GemmPlan> plans_;
};

// The largest power of two, at most 256, that divides `p` (cuBLASLt's alignment preferences).
int pointerAlignment(const void* p);

}  // namespace slimeccl

#endif
