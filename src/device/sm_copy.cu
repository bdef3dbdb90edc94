#include "src/device/sm_copy.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>

namespace slimeccl {
namespace {

constexpr int kThreads = 512;
constexpr int kMaxBlocks = 16;
constexpr size_t kBytesPerBlock = 64 << 10;
constexpr int kMaxDevices = 64;

// By device: whether the kernel is loaded there.
std::atomic<bool> loadedOn[kMaxDevices];

__device__ void setFlags(const uint64_t* flags, int count) {
  for (int i = 0; i < count; ++i) *reinterpret_cast<volatile uint32_t*>(flags[i]) = 1;
}

__device__ void awaitFlags(const uint64_t* flags, int count) {
  for (int i = 0; i < count; ++i)
    while (*reinterpret_cast<volatile uint32_t*>(flags[i]) != 1) {
    }
}

__device__ void clearFlags(const uint64_t* flags, int count) {
  for (int i = 0; i < count; ++i) *reinterpret_cast<volatile uint32_t*>(flags[i]) = 0;
}

// Whether this block is the last of the grid to reach `counter`; the last one sets it back to 0.
__device__ bool lastToArrive(uint32_t* counter) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    last = atomicAdd(counter, 1) == gridDim.x - 1;
    if (last) {
      // What the other blocks wrote before they counted is seen before what this one does next.
      __threadfence_system();
      *counter = 0;
    }
  }
  __syncthreads();
  return last;
}

// The grid's threads share each copy: 16-byte words where both ends allow, else single bytes.
__device__ void copyAll(const SmCopyJob& job) {
  const size_t thread = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t threads = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (int c = 0; c < job.copyCount; ++c) {
    const SmCopy& copy = job.copies[c];
    char* dst = reinterpret_cast<char*>(copy.dst);
    const char* src = reinterpret_cast<const char*>(copy.src);
    size_t done = 0;
    if (((copy.dst | copy.src) & 15) == 0) {
      const size_t words = copy.bytes / 16;
      for (size_t i = thread; i < words; i += threads)
        reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
      done = words * 16;
    }
    for (size_t i = done + thread; i < copy.bytes; i += threads) dst[i] = src[i];
  }
}

// Every block waits for the peers' first flags; the last block to see them clears them (no block
// can still be waiting then). After the copies, the last block to finish sets the peers' second
// flags and waits for its own: the kernel ends when every peer's copies into this rank have landed.
__global__ void smCopyKernel(SmCopyJob job) {
  uint32_t* counters = reinterpret_cast<uint32_t*>(job.counters);
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) setFlags(job.before.set, job.before.sets);
    awaitFlags(job.before.wait, job.before.waits);
  }
  if (lastToArrive(&counters[0]) && threadIdx.x == 0) clearFlags(job.before.wait, job.before.waits);
  __syncthreads();
  copyAll(job);
  // Each thread's copies are seen system-wide before its block counts itself done.
  __threadfence_system();
  if (lastToArrive(&counters[1]) && threadIdx.x == 0) {
    setFlags(job.after.set, job.after.sets);
    awaitFlags(job.after.wait, job.after.waits);
    clearFlags(job.after.wait, job.after.waits);
  }
}

}  // namespace

void loadSmCopyKernel(int device) {
  if (device < 0 || device >= kMaxDevices || loadedOn[device].load()) return;
  cudaFuncAttributes attributes;
  if (cudaFuncGetAttributes(&attributes, smCopyKernel) == cudaSuccess) loadedOn[device].store(true);
  else cudaGetLastError();
}

bool smCopyKernelLoaded(int device) { return device >= 0 && device < kMaxDevices && loadedOn[device].load(); }

int launchSmCopy(const SmCopyJob& job, void* stream) {
  size_t bytes = 0;
  for (int c = 0; c < job.copyCount; ++c) bytes += job.copies[c].bytes;
  const auto blocks = static_cast<unsigned>(std::clamp<size_t>((bytes + kBytesPerBlock - 1) / kBytesPerBlock, 1, kMaxBlocks));
  void* args[] = {const_cast<SmCopyJob*>(&job)};
  return static_cast<int>(cudaLaunchKernel(reinterpret_cast<const void*>(smCopyKernel), dim3(blocks), dim3(kThreads),
                                           args, 0, static_cast<cudaStream_t>(stream)));
}

}  // namespace slimeccl
