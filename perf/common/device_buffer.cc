#include "common/device_buffer.h"

#include <stdexcept>
#include <string>

#include "common/usage_error.h"

#ifdef SLIMECCL_PERF_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slimeccl_perf {

#ifdef SLIMECCL_PERF_WITH_CUDA

namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) {
  void* memory = nullptr;
  const size_t allocated = bytes == 0 ? 1 : bytes;
  check(cudaMalloc(&memory, allocated), "cudaMalloc");
  data_.reset(static_cast<char*>(memory));
  check(cudaMemset(memory, 0, allocated), "cudaMemset");
  check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
}

void DeviceBuffer::upload(const void* host, size_t offset, size_t bytes) {
  check(cudaMemcpy(data_.get() + offset, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  // From pageable memory cudaMemcpy may return before the bytes land; ops on a non-blocking CUDA
  // stream would not wait for them.
  check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
}

void DeviceBuffer::download(void* host, size_t offset, size_t bytes) const {
  check(cudaMemcpy(host, data_.get() + offset, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from the device");
}

void DeviceBuffer::Free::operator()(char* memory) const { cudaFree(memory); }

void useGpuOfRank(int rank) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0)
    throw UsageError(std::string("-D 1 needs a GPU: ") + (rc != cudaSuccess ? cudaGetErrorString(rc) : "none found"));
  check(cudaSetDevice(rank % count), "cudaSetDevice");
}

void* createCudaStream() {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return stream;
}

void destroyCudaStream(void* stream) { cudaStreamDestroy(static_cast<cudaStream_t>(stream)); }

#else

namespace {

[[noreturn]] void noCuda() { throw UsageError("-D 1 needs a build with CUDA (SLIMECCL_WITH_CUDA=ON)"); }

}  // namespace

DeviceBuffer::DeviceBuffer(size_t) { noCuda(); }
void DeviceBuffer::upload(const void*, size_t, size_t) { noCuda(); }
void DeviceBuffer::download(void*, size_t, size_t) const { noCuda(); }
void DeviceBuffer::Free::operator()(char*) const {}
void useGpuOfRank(int) { noCuda(); }
void* createCudaStream() { noCuda(); }
void destroyCudaStream(void*) {}

#endif

}  // namespace slimeccl_perf
