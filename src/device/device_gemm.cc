#include "src/device/device_gemm.h"

#include <algorithm>

#include "src/device/gpu.h"
#include "src/base/error.h"
#include "src/op.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "src/device/cublaslt_calls.h"
#include "src/device/gemm_plans.h"
#endif

namespace slimeccl {

bool deviceGemmTakes(slimecclDataType_t type) {
  return type == slimecclBfloat16 || type == slimecclFloat16 || type == slimecclFloat32 || type == slimecclFloat64;
}

#ifdef SLIMECCL_HAVE_CUDA

namespace {

// cuBLAS's advice for Hopper; smaller GPUs take less of it.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

cudaDataType_t cudaTypeOf(slimecclDataType_t type) {
  switch (type) {
    case slimecclBfloat16: return CUDA_R_16BF;
    case slimecclFloat16: return CUDA_R_16F;
    case slimecclFloat64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

}  // namespace

slimecclResult_t DeviceGemm::create(int rank, int device, bool tf32, const char* what,
                                    std::unique_ptr<DeviceGemm>* out) {
  std::unique_ptr<DeviceGemm> gemm(new DeviceGemm());
  gemm->rank_ = rank;
  gemm->device_ = device;
  gemm->tf32_ = tf32;
  const CublasLtCalls* lt = nullptr;
  SLIMECCL_CHECK(cublasLtCalls(rank, what, &lt));
  gemm->lt_ = lt;
  OnDevice on(device);
  cublasLtHandle_t handle = nullptr;
  if (const cublasStatus_t rc = lt->create(&handle); rc != CUBLAS_STATUS_SUCCESS)
    return fail(slimecclUnhandledDeviceError, "rank {}: {}: cublasLtCreate on GPU {} failed: {}", rank, what, device,
                lt->statusString(rc));
  gemm->handle_ = handle;
  if (const cudaError_t rc = cudaMalloc(&gemm->workspace_, kWorkspaceBytes); rc != cudaSuccess) {
    gemm->workspace_ = nullptr;
    return fail(slimecclUnhandledDeviceError, "rank {}: {}: allocating cuBLASLt's workspace on GPU {} failed: {}", rank,
                what, device, cudaGetErrorString(rc));
  }
  gemm->plans_ = std::make_unique<GemmPlans>(*lt, handle, kWorkspaceBytes);
  *out = std::move(gemm);
  return slimecclSuccess;
}

DeviceGemm::~DeviceGemm() {
  OnDevice on(device_);
  plans_.reset();
  if (handle_ != nullptr) lt_->destroy(static_cast<cublasLtHandle_t>(handle_));
  if (workspace_ != nullptr) cudaFree(workspace_);
  for (const Grown* grown : {&gathered_, &partials_})
    for (void* p : grown->buffers) cudaFree(p);
}

slimecclResult_t DeviceGemm::multiplyRowBlock(const DeviceGemmShape& shape, int block, const void* a, void* cudaStream,
                                              const char* what) {
  char* c = static_cast<char*>(shape.c) + static_cast<size_t>(block) * shape.mLocal * shape.n * typeSize(shape.type);
  return multiplyRows(shape, shape.mLocal, a, c, cudaStream, what);
}

slimecclResult_t DeviceGemm::multiplyRows(const DeviceGemmShape& shape, size_t rows, const void* a, void* out,
                                          void* cudaStream, const char* what) {
  cudaStream_t stream = static_cast<cudaStream_t>(cudaStream);
  if (rows == 0 || shape.n == 0) return slimecclSuccess;
  // The handle is of this GPU; the caller's thread may have another current.
  OnDevice on(device_);
  if (shape.k == 0) {
    // out = a x b with no columns in a: every element is an empty sum.
    if (const cudaError_t rc = cudaMemsetAsync(out, 0, rows * shape.n * typeSize(shape.type), stream);
        rc != cudaSuccess)
      return fail(slimecclUnhandledDeviceError, "rank {}: {}: zeroing rows of the product failed: {}", rank_, what,
                  cudaGetErrorString(rc));
    return slimecclSuccess;
  }
  // Row-major out = a x b is column-major out^T = b^T x a^T: cuBLASLt reads b as an N x K matrix
  // (ld N) and a as K x rows (ld K), and writes out^T as N x rows (ld N).
  const bool isDouble = shape.type == slimecclFloat64;
  const cublasComputeType_t compute = isDouble                                 ? CUBLAS_COMPUTE_64F
                                      : shape.type == slimecclFloat32 && tf32_ ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                               : CUBLAS_COMPUTE_32F;
  const GemmPlanKey key{cudaTypeOf(shape.type),    compute,
                        static_cast<int>(shape.n), static_cast<int>(rows),
                        static_cast<int>(shape.k), pointerAlignment(shape.b),
                        pointerAlignment(a),       pointerAlignment(out)};
  const float oneF = 1.0f, zeroF = 0.0f;
  const double oneD = 1.0, zeroD = 0.0;
  const void* alpha = isDouble ? static_cast<const void*>(&oneD) : &oneF;
  const void* beta = isDouble ? static_cast<const void*>(&zeroD) : &zeroF;
  std::lock_guard<std::mutex> lock(mutex_);
  std::string why;
  const GemmPlan* plan = plans_->find(key, &why);
  if (plan == nullptr)
    return fail(slimecclUnhandledDeviceError, "rank {}: {}: no cuBLASLt plan for a {} x {} x {} GEMM: {}", rank_, what,
                rows, shape.k, shape.n, why);
  const cublasStatus_t rc =
      lt_->matmul(static_cast<cublasLtHandle_t>(handle_), plan->desc, alpha, shape.b, plan->a, a, plan->b, beta, out,
                  plan->d, out, plan->d, &plan->algo, workspace_, kWorkspaceBytes, stream);
  if (rc != CUBLAS_STATUS_SUCCESS)
    return fail(slimecclUnhandledDeviceError, "rank {}: {}: cuBLASLt GEMM of {} rows failed: {}", rank_, what, rows,
                lt_->statusString(rc));
  return slimecclSuccess;
}

slimecclResult_t DeviceGemm::workspace(Workspace which, size_t bytes, void** out) {
  std::lock_guard<std::mutex> lock(mutex_);
  Grown& grown = which == Workspace::kGatheredA ? gathered_ : partials_;
  if (grown.bytes < bytes || grown.buffers.empty()) {
    OnDevice on(device_);
    const size_t size = std::max({bytes, 2 * grown.bytes, size_t{1}});
    void* p = nullptr;
    if (const cudaError_t rc = cudaMalloc(&p, size); rc != cudaSuccess)
      return fail(slimecclUnhandledDeviceError, "rank {}: {}: allocating {} bytes of GPU {} for {} failed: {}", rank_,
                  which == Workspace::kGatheredA ? "AllGatherGemm" : "GemmReduceScatter", size, device_,
                  which == Workspace::kGatheredA ? "the gathered A (pass aGathered to use memory of your own)"
                                                 : "the partial products",
                  cudaGetErrorString(rc));
    grown.buffers.push_back(p);
    grown.bytes = size;
  }
  *out = grown.buffers.back();
  return slimecclSuccess;
}

#else

// Without CUDA no GEMM is ever planned; the class is complete only so the handle can be destroyed.
class GemmPlans {};

slimecclResult_t DeviceGemm::create(int rank, int, bool, const char* what, std::unique_ptr<DeviceGemm>*) {
  return fail(slimecclInvalidUsage, "rank {}: {}: this build has no CUDA", rank, what);
}
DeviceGemm::~DeviceGemm() = default;
slimecclResult_t DeviceGemm::multiplyRowBlock(const DeviceGemmShape&, int, const void*, void*, const char* what) {
  return fail(slimecclInternalError, "rank {}: {}: this build has no CUDA", rank_, what);
}
slimecclResult_t DeviceGemm::multiplyRows(const DeviceGemmShape&, size_t, const void*, void*, void*, const char* what) {
  return fail(slimecclInternalError, "rank {}: {}: this build has no CUDA", rank_, what);
}
slimecclResult_t DeviceGemm::workspace(Workspace, size_t, void**) {
  return fail(slimecclInternalError, "rank {}: a GEMM-overlap op: this build has no CUDA", rank_);
}

#endif

}  // namespace slimeccl
