#include "src/device/sm_copy.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>

namespace slimeccl {
namespace {

constexpr int kThreads = 512;
// 16-byte words each thread loads before it stores any: enough loads in flight to cover the
// latency of NVLink stores, which one word per thread leaves idle most of the time.
constexpr int kUnroll = 8;
constexpr size_t kChunkWords = static_cast<size_t>(kThreads) * kUnroll;
constexpr size_t kChunkBytes = kChunkWords * 16;
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
// The block's threads meet before its first thread fences and counts, so what any of them wrote is
// seen system-wide before the count (a fence orders what its thread has observed, and the barrier
// made the others' writes observed): one fence per block, where one per thread cost each op about
// 2 ns per thread, in turn.
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

// One chunk of a copy by one block: every thread loads its words, then stores them.
__device__ void copyChunk(uint4* dst, const uint4* src, size_t first, size_t words) {
  uint4 held[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const size_t i = first + u * kThreads + threadIdx.x;
    if (i < words) held[u] = src[i];
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const size_t i = first + u * kThreads + threadIdx.x;
    if (i < words) dst[i] = held[u];
  }
}

__device__ bool wordAligned(const SmCopy& copy) { return ((copy.dst | copy.src) & 15) == 0; }

// Each copy has blocks of its own, block b copy b mod copies (or, with fewer blocks than copies,
// copy c block c mod blocks), so the local copy runs through memory while the others run over
// NVLink: numbered across the copies, the chunks kept every block on the local copy first and on
// NVLink after. The blocks of a copy take its 16-byte words chunk by chunk; a copy whose ends are
// not both 16-byte aligned, and the last bytes of the others, go byte by byte over the grid.
__device__ void copyAll(const SmCopyJob& job) {
  const int blocks = static_cast<int>(gridDim.x), block = static_cast<int>(blockIdx.x), copies = job.copyCount;
  for (int c = 0; c < copies; ++c) {
    const SmCopy& copy = job.copies[c];
    if (!wordAligned(copy)) continue;
    const bool mine = blocks >= copies ? block % copies == c : c % blocks == block;
    if (!mine) continue;
    const size_t stride = blocks >= copies ? (blocks - 1 - c) / copies + 1 : 1;
    const size_t words = copy.bytes / 16, chunks = (words + kChunkWords - 1) / kChunkWords;
    for (size_t chunk = blocks >= copies ? block / copies : 0; chunk < chunks; chunk += stride)
      copyChunk(reinterpret_cast<uint4*>(copy.dst), reinterpret_cast<const uint4*>(copy.src), chunk * kChunkWords, words);
  }
  const size_t thread = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t threads = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (int c = 0; c < job.copyCount; ++c) {
    const SmCopy& copy = job.copies[c];
    char* dst = reinterpret_cast<char*>(copy.dst);
    const char* src = reinterpret_cast<const char*>(copy.src);
    const size_t from = wordAligned(copy) ? copy.bytes / 16 * 16 : 0;
    for (size_t i = from + thread; i < copy.bytes; i += threads) dst[i] = src[i];
  }
}

// Block 0 alone runs the first handshake, then raises `go` in device memory, on which the other
// blocks wait: every block polling the flags in pinned host memory cost about 1 us per block, in
// turn. After the copies, the last block to finish lowers `go` (every block is past it), sets the
// peers' second flags and waits for its own: the kernel ends when every peer's copies into this
// rank have landed.
__global__ void smCopyKernel(SmCopyJob job) {
  uint32_t* finished = reinterpret_cast<uint32_t*>(job.counters);
  volatile uint32_t* go = finished + 1;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      setFlags(job.before.set, job.before.sets);
      awaitFlags(job.before.wait, job.before.waits);
      clearFlags(job.before.wait, job.before.waits);
      __threadfence();
      *go = 1;
    } else {
      while (*go != 1) {
      }
      __threadfence();
    }
  }
  __syncthreads();
  copyAll(job);
  if (lastToArrive(finished) && threadIdx.x == 0) {
    *go = 0;
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

int launchSmCopy(const SmCopyJob& job, int maxBlocks, void* stream) {
  size_t chunks = 0;
  for (int c = 0; c < job.copyCount; ++c) chunks += (job.copies[c].bytes + kChunkBytes - 1) / kChunkBytes;
  const auto blocks = static_cast<unsigned>(std::clamp<size_t>(chunks, 1, std::max(maxBlocks, 1)));
  void* args[] = {const_cast<SmCopyJob*>(&job)};
  return static_cast<int>(cudaLaunchKernel(reinterpret_cast<const void*>(smCopyKernel), dim3(blocks), dim3(kThreads),
                                           args, 0, static_cast<cudaStream_t>(stream)));
}

}  // namespace slimeccl
