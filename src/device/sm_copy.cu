#include "src/device/sm_copy.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>

#include "src/device/kernel_handshake.cuh"

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
__device__ void copyAll(const SmCopy* all, int copies) {
  const int blocks = static_cast<int>(gridDim.x), block = static_cast<int>(blockIdx.x);
  for (int c = 0; c < copies; ++c) {
    const SmCopy& copy = all[c];
    if (!wordAligned(copy)) continue;
    const bool mine = blocks >= copies ? block % copies == c : c % blocks == block;
    if (!mine) continue;
    const size_t stride = blocks >= copies ? (blocks - 1 - c) / copies + 1 : 1;
    const size_t words = copy.bytes / 16, chunks = (words + kChunkWords - 1) / kChunkWords;
    for (size_t chunk = blocks >= copies ? block / copies : 0; chunk < chunks; chunk += stride)
      copyChunk(reinterpret_cast<uint4*>(copy.dst), reinterpret_cast<const uint4*>(copy.src), chunk * kChunkWords,
                words);
  }
  const size_t thread = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t threads = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (int c = 0; c < copies; ++c) {
    const SmCopy& copy = all[c];
    char* dst = reinterpret_cast<char*>(copy.dst);
    const char* src = reinterpret_cast<const char*>(copy.src);
    const size_t from = wordAligned(copy) ? copy.bytes / 16 * 16 : 0;
    for (size_t i = from + thread; i < copy.bytes; i += threads) dst[i] = src[i];
  }
}

// The snapshots, the first handshake, the copies, then the second handshake
// (src/device/kernel_handshake.cuh).
__global__ void smCopyKernel(SmCopyJob job) {
  if (job.snapshotCount > 0) {
    copyAll(job.snapshots, job.snapshotCount);
    meetBeforeOnceAllArrive(job.before, job.counters);
  } else {
    meetBefore(job.before, job.counters);
  }
  copyAll(job.copies, job.copyCount);
  meetAfter(job.after, job.counters);
}

}  // namespace

void loadSmCopyKernel(int device) {
  if (device < 0 || device >= kMaxDevices || loadedOn[device].load()) return;
  cudaFuncAttributes attributes;
  if (cudaFuncGetAttributes(&attributes, smCopyKernel) == cudaSuccess)
    loadedOn[device].store(true);
  else
    cudaGetLastError();
}

bool smCopyKernelLoaded(int device) { return device >= 0 && device < kMaxDevices && loadedOn[device].load(); }

int launchSmCopy(const SmCopyJob& job, int maxBlocks, void* stream, int* blocksUsed) {
  size_t chunks = 0;
  for (int c = 0; c < job.copyCount; ++c) chunks += (job.copies[c].bytes + kChunkBytes - 1) / kChunkBytes;
  for (int c = 0; c < job.snapshotCount; ++c) chunks += (job.snapshots[c].bytes + kChunkBytes - 1) / kChunkBytes;
  const auto blocks = static_cast<unsigned>(std::clamp<size_t>(chunks, 1, std::max(maxBlocks, 1)));
  *blocksUsed = static_cast<int>(blocks);
  void* args[] = {const_cast<SmCopyJob*>(&job)};
  return static_cast<int>(cudaLaunchKernel(reinterpret_cast<const void*>(smCopyKernel), dim3(blocks), dim3(kThreads),
                                           args, 0, static_cast<cudaStream_t>(stream)));
}

}  // namespace slimeccl
