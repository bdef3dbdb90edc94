#include "src/device/device_gemm.h"

#include <algorithm>

#include "src/device/gpu.h"
#include "src/base/error.h"
#include "src/op.h"

#ifdef SLIMECCL_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "src/device/cublas_calls.h"
#endif

namespace slimeccl {

bool deviceGemmTakes(slimecclDataType_t type) {
  return type == slimecclBfloat16 || type == slimecclFloat16 || type == slimecclFloat32 || type == slimecclFloat64;
}

#ifdef SLIMECCL_HAVE_CUDA

namespace {

// cuBLAS's advice for Hopper; smaller GPUs take less of it.
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

cudaDataType_t cudaTypeOf(slimecclDataType_t type) {
  switch (type) {
    case slimecclBfloat16: return CUDA_R_16BF;
    case slimecclFloat16: return CUDA_R_16F;
    case slimecclFloat64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

}  // namespace

slimecclResult_t DeviceGemm::create(int rank, int device, bool tf32, std::unique_ptr<DeviceGemm>* out) {
  std::unique_ptr<DeviceGemm> gemm(new DeviceGemm());
  gemm->rank_ = rank;
  gemm->device_ = device;
  gemm->tf32_ = tf32;
  const CublasCalls* cublas = nullptr;
  SLIMECCL_CHECK(cublasCalls(rank, &cublas));
  gemm->cublas_ = cublas;
  OnDevice on(device);
  cublasHandle_t handle = nullptr;
  if (const cublasStatus_t rc = cublas->create(&handle); rc != CUBLAS_STATUS_SUCCESS)
    return fail(slimecclUnhandledDeviceError, "rank {}: AllGatherGemm: cublasCreate on GPU {} failed: {}", rank, device,
                cublas->statusString(rc));
  gemm->handle_ = handle;
  if (const cudaError_t rc = cudaMalloc(&gemm->cublasWorkspace_, kCublasWorkspaceBytes); rc != cudaSuccess) {
    gemm->cublasWorkspace_ = nullptr;
    return fail(slimecclUnhandledDeviceError,
                "rank {}: AllGatherGemm: allocating cuBLAS's workspace on GPU {} failed: {}", rank, device,
                cudaGetErrorString(rc));
  }
  *out = std::move(gemm);
  return slimecclSuccess;
}

DeviceGemm::~DeviceGemm() {
  OnDevice on(device_);
  if (handle_ != nullptr) cublas_->destroy(static_cast<cublasHandle_t>(handle_));
  if (cublasWorkspace_ != nullptr) cudaFree(cublasWorkspace_);
  for (void* p : gathered_) cudaFree(p);
}

slimecclResult_t DeviceGemm::multiplyRowBlock(const DeviceGemmShape& shape, int block, const void* a, void* cudaStream,
                                              const char* what) {
  const size_t elem = typeSize(shape.type);
  char* c = static_cast<char*>(shape.c) + static_cast<size_t>(block) * shape.mLocal * shape.n * elem;
  cudaStream_t stream = static_cast<cudaStream_t>(cudaStream);
  if (shape.mLocal == 0 || shape.n == 0) return slimecclSuccess;
  // The handle is of this GPU; the caller's thread may have another current.
  OnDevice on(device_);
  if (shape.k == 0) {
    // C = A x B with no columns in A: every element is an empty sum.
    if (const cudaError_t rc = cudaMemsetAsync(c, 0, shape.mLocal * shape.n * elem, stream); rc != cudaSuccess)
      return fail(slimecclUnhandledDeviceError, "rank {}: {}: zeroing rows of C failed: {}", rank_, what,
                  cudaGetErrorString(rc));
    return slimecclSuccess;
  }
  // Row-major C = A x B is column-major C^T = B^T x A^T: cuBLAS reads B as an N x K matrix (ld N)
  // and the block of A as K x mLocal (ld K), and writes C^T as N x mLocal (ld N).
  const int m = static_cast<int>(shape.n), n = static_cast<int>(shape.mLocal), k = static_cast<int>(shape.k);
  const cudaDataType_t type = cudaTypeOf(shape.type);
  const float oneF = 1.0f, zeroF = 0.0f;
  const double oneD = 1.0, zeroD = 0.0;
  const bool isDouble = shape.type == slimecclFloat64;
  const cublasComputeType_t compute = isDouble                                 ? CUBLAS_COMPUTE_64F
                                      : shape.type == slimecclFloat32 && tf32_ ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                               : CUBLAS_COMPUTE_32F;
  const void* alpha = isDouble ? static_cast<const void*>(&oneD) : &oneF;
  const void* beta = isDouble ? static_cast<const void*>(&zeroD) : &zeroF;
  std::lock_guard<std::mutex> lock(mutex_);
  const CublasCalls& cublas = *cublas_;
  cublasHandle_t handle = static_cast<cublasHandle_t>(handle_);
  cublasStatus_t rc = cublas.setStream(handle, stream);
  // Setting the stream puts cuBLAS back on its own workspace pool; ours is set after it.
  if (rc == CUBLAS_STATUS_SUCCESS) rc = cublas.setWorkspace(handle, cublasWorkspace_, kCublasWorkspaceBytes);
  if (rc == CUBLAS_STATUS_SUCCESS)
    rc = cublas.gemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, shape.b, type, m, a, type, k, beta, c, type, m,
                       compute, CUBLAS_GEMM_DEFAULT);
  if (rc != CUBLAS_STATUS_SUCCESS)
    return fail(slimecclUnhandledDeviceError, "rank {}: {}: cuBLAS GEMM of rank {}'s row block failed: {}", rank_, what,
                block, cublas.statusString(rc));
  return slimecclSuccess;
}

slimecclResult_t DeviceGemm::gatheredWorkspace(size_t bytes, void** out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (gatheredBytes_ < bytes || gathered_.empty()) {
    OnDevice on(device_);
    const size_t grown = std::max({bytes, 2 * gatheredBytes_, size_t{1}});
    void* p = nullptr;
    if (const cudaError_t rc = cudaMalloc(&p, grown); rc != cudaSuccess)
      return fail(slimecclUnhandledDeviceError,
                  "rank {}: AllGatherGemm: allocating {} bytes of GPU {} for the gathered A failed: {} (pass aGathered "
                  "to use memory of your own)",
                  rank_, grown, device_, cudaGetErrorString(rc));
    gathered_.push_back(p);
    gatheredBytes_ = grown;
  }
  *out = gathered_.back();
  return slimecclSuccess;
}

#else

slimecclResult_t DeviceGemm::create(int rank, int, bool, std::unique_ptr<DeviceGemm>*) {
  return fail(slimecclInvalidUsage, "rank {}: AllGatherGemm: this build has no CUDA", rank);
}
DeviceGemm::~DeviceGemm() = default;
slimecclResult_t DeviceGemm::multiplyRowBlock(const DeviceGemmShape&, int, const void*, void*, const char* what) {
  return fail(slimecclInternalError, "rank {}: {}: this build has no CUDA", rank_, what);
}
slimecclResult_t DeviceGemm::gatheredWorkspace(size_t, void**) {
  return fail(slimecclInternalError, "rank {}: AllGatherGemm: this build has no CUDA", rank_);
}

#endif

}  // namespace slimeccl
