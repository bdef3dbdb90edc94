#include "src/device/gemm_plans.h"

#ifdef SLIMECCL_HAVE_CUDA

#include <cstdint>

namespace slimeccl {

int pointerAlignment(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  int alignment = 1;
  while (alignment < 256 && address % (2 * static_cast<uintptr_t>(alignment)) == 0) alignment *= 2;
  return alignment;
}

GemmPlans::~GemmPlans() {
  for (auto& [key, plan] : plans_) destroy(&plan);
}

void GemmPlans::destroy(GemmPlan* plan) {
  if (plan->a != nullptr) lt_.layoutDestroy(plan->a);
  if (plan->b != nullptr) lt_.layoutDestroy(plan->b);
  if (plan->d != nullptr) lt_.layoutDestroy(plan->d);
  if (plan->desc != nullptr) lt_.descDestroy(plan->desc);
}

const GemmPlan* GemmPlans::find(const GemmPlanKey& key, std::string* why) {
  if (auto found = plans_.find(key); found != plans_.end()) return &found->second;
  GemmPlan plan;
  if (!make(key, &plan, why)) {
    destroy(&plan);
    return nullptr;
  }
  return &plans_.emplace(key, plan).first->second;
}

bool GemmPlans::make(const GemmPlanKey& key, GemmPlan* plan, std::string* why) {
  const cudaDataType_t scale = key.compute == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F;
  cublasStatus_t rc = lt_.descCreate(&plan->desc, key.compute, scale);
  if (rc == CUBLAS_STATUS_SUCCESS) rc = lt_.layoutCreate(&plan->a, key.type, key.m, key.k, key.m);
  if (rc == CUBLAS_STATUS_SUCCESS) rc = lt_.layoutCreate(&plan->b, key.type, key.k, key.n, key.k);
  if (rc == CUBLAS_STATUS_SUCCESS) rc = lt_.layoutCreate(&plan->d, key.type, key.m, key.n, key.m);
  if (rc != CUBLAS_STATUS_SUCCESS) {
    *why = std::string("describing the GEMM: ") + lt_.statusString(rc);
    return false;
  }
  cublasLtMatmulPreference_t preference = nullptr;
  rc = lt_.preferenceCreate(&preference);
  const uint64_t workspace = workspaceBytes_;
  const uint32_t alignA = key.alignA, alignB = key.alignB, alignD = key.alignD;
  const struct {
    cublasLtMatmulPreferenceAttributes_t attribute;
    const void* value;
    size_t size;
  } preferences[] = {
      {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA, sizeof(alignA)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB, sizeof(alignB)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignD, sizeof(alignD)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignD, sizeof(alignD)},
  };
  for (const auto& p : preferences)
    if (rc == CUBLAS_STATUS_SUCCESS) rc = lt_.preferenceSetAttribute(preference, p.attribute, p.value, p.size);
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  if (rc == CUBLAS_STATUS_SUCCESS)
    rc = lt_.heuristic(handle_, plan->desc, plan->a, plan->b, plan->d, plan->d, preference, 1, &best, &found);
  if (preference != nullptr) lt_.preferenceDestroy(preference);
  if (rc != CUBLAS_STATUS_SUCCESS || found == 0 || best.state != CUBLAS_STATUS_SUCCESS) {
    *why = std::string("cuBLASLt's heuristics offered no algorithm: ") +
           lt_.statusString(rc != CUBLAS_STATUS_SUCCESS ? rc
                            : found == 0                ? CUBLAS_STATUS_NOT_SUPPORTED
                                                        : best.state);
    return false;
  }
  plan->algo = best.algo;
  return true;
}

}  // namespace slimeccl

#endif
