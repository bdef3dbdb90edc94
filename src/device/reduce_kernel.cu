#include "src/device/reduce_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "src/device/kernel_handshake.cuh"
#include "src/device/kernel_table.cuh"
#include "src/device/reduce_arith.cuh"
#include "src/op.h"

namespace slimeccl {
namespace {

constexpr int kThreads = 512;
// 16-byte words each thread loads from a source before it reduces any (loads in flight).
constexpr int kUnroll = 8;
// Each block takes at least this much of each source: below it, more blocks cost more to start and
// to meet than they add.
constexpr size_t kBytesPerBlock = 16 << 10;

template <typename E>
union Word {
  uint4 bits;
  typename Arith<E>::Stored elements[16 / sizeof(typename Arith<E>::Stored)];
};

template <typename E, typename Op>
__device__ uint4 combineWords(uint4 a, uint4 b) {
  Word<E> x, y;
  x.bits = a;
  y.bits = b;
#pragma unroll
  for (auto& e : x.elements) e = combine<E, Op>(e, y.elements[&e - x.elements]);
  return x.bits;
}

template <typename E>
__device__ uint4 premultiplyWord(uint4 a, typename Arith<E>::Stored scalar) {
  Word<E> x;
  x.bits = a;
#pragma unroll
  for (auto& e : x.elements) e = premultiply<E>(e, scalar);
  return x.bits;
}

template <typename E>
__device__ uint4 divideWord(uint4 a, int divisor) {
  Word<E> x;
  x.bits = a;
#pragma unroll
  for (auto& e : x.elements) e = divide<E>(e, divisor);
  return x.bits;
}

__device__ bool allWordAligned(const uint64_t* spans, int count) {
  uint64_t bits = 0;
  for (int s = 0; s < count; ++s) bits |= spans[s];
  return (bits & 15) == 0;
}

// A PreMulSum's scalars by rank, read once the first handshake has passed (a device scalar is then
// what its rank's stream wrote before the op).
template <typename Stored>
__device__ void loadScalars(const ReduceJob& job, Stored* scalars) {
  if (threadIdx.x < job.scalarCount) {
    const uint64_t at = job.scalarPointers[threadIdx.x];
    Stored value;
    if (at != 0) {
      value = *reinterpret_cast<const volatile Stored*>(at);
    } else {
      const uint64_t bits = job.scalarBits[threadIdx.x];
      memcpy(&value, &bits, sizeof(Stored));
    }
    scalars[threadIdx.x] = value;
  }
  __syncthreads();
}

// One step's words in rounds over the grid: in each round every thread loads kUnroll words of a
// source, kThreads words apart across the grid's blocks (a warp's loads stay contiguous, and a
// small op still spreads over every block), before it reduces them into what it holds; it then
// stores the result into every destination. Elements past the last whole word, and every element
// where some span is not 16-byte aligned, go one by one over the grid's threads. An input is
// multiplied by its rank's scalar first (PreMulSum); a partial result is taken as it is.
template <typename E, typename Op, bool kPreMul>
__device__ void reduceStep(const ReduceJob& job, const ReduceStep& step, int divisor,
                           const typename Arith<E>::Stored* scalars) {
  using Stored = typename Arith<E>::Stored;
  constexpr size_t perWord = 16 / sizeof(Stored);
  const uint64_t* sources = job.spans + step.firstSpan;
  const uint64_t* destinations = sources + step.sources;
  const int8_t* ranks = job.spanRanks + step.firstSpan;
  auto premultiplied = [&](uint4 word, int s) {
    if constexpr (kPreMul) {
      if (ranks[s] >= 0) return premultiplyWord<E>(word, scalars[ranks[s]]);
    }
    return word;
  };
  const size_t words = allWordAligned(sources, step.sources + step.destinations) ? step.count / perWord : 0;
  const size_t lane = blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * kThreads;
  for (size_t base = 0; base < words; base += stride * kUnroll) {
    uint4 held[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t i = base + u * stride + lane;
      if (i < words) held[u] = reinterpret_cast<const uint4*>(sources[0])[i];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) held[u] = premultiplied(held[u], 0);
    for (int s = 1; s < step.sources; ++s) {
      uint4 in[kUnroll];
      const uint4* src = reinterpret_cast<const uint4*>(sources[s]);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const size_t i = base + u * stride + lane;
        if (i < words) in[u] = src[i];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) held[u] = combineWords<E, Op>(held[u], premultiplied(in[u], s));
    }
    if (divisor != 0) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) held[u] = divideWord<E>(held[u], divisor);
    }
    for (int d = 0; d < step.destinations; ++d) {
      uint4* dst = reinterpret_cast<uint4*>(destinations[d]);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const size_t i = base + u * stride + lane;
        if (i < words) dst[i] = held[u];
      }
    }
  }
  const size_t threads = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = words * perWord + blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < step.count;
       i += threads) {
    auto input = [&](int s) {
      const Stored x = reinterpret_cast<const Stored*>(sources[s])[i];
      if constexpr (kPreMul) {
        if (ranks[s] >= 0) return premultiply<E>(x, scalars[ranks[s]]);
      }
      return x;
    };
    Stored v = input(0);
    for (int s = 1; s < step.sources; ++s) v = combine<E, Op>(v, input(s));
    if (divisor != 0) v = divide<E>(v, divisor);
    for (int d = 0; d < step.destinations; ++d) reinterpret_cast<Stored*>(destinations[d])[i] = v;
  }
}

template <typename E, typename Op, bool kPreMul = false>
__global__ void __launch_bounds__(kThreads) reduceKernel(ReduceJob job) {
  __shared__ typename Arith<E>::Stored scalars[kReduceMaxRanks];
  meetBefore(job.before, job.counters);
  if constexpr (kPreMul) loadScalars(job, scalars);
  for (int k = 0; k < job.stepCount; ++k) {
    if (k > 0) meetBetween(job.stepSignals[k - 1], job.stepWaits[k], job.counters, static_cast<uint32_t>(k));
    reduceStep<E, Op, kPreMul>(job, job.steps[k], k + 1 == job.stepCount ? job.divisor : 0, scalars);
  }
  meetAfter(job.after, job.counters);
}

template <typename E>
struct ReduceKernels {
  static inline const void* const kernels[kReductionKernelOps] = {
      reinterpret_cast<const void*>(reduceKernel<E, SumOp>), reinterpret_cast<const void*>(reduceKernel<E, ProdOp>),
      reinterpret_cast<const void*>(reduceKernel<E, MaxOp>), reinterpret_cast<const void*>(reduceKernel<E, MinOp>),
      reinterpret_cast<const void*>(reduceKernel<E, SumOp, true>)};
};
using ReduceKernelTable = KernelTable<ReduceKernels>;

}  // namespace

void loadReduceKernels(int device) { ReduceKernelTable::load(device); }

bool reduceKernelsLoaded(int device) { return ReduceKernelTable::loaded(device); }

int launchReduce(const ReduceJob& job, slimecclDataType_t type, slimecclRedOp_t op, int maxBlocks, void* stream,
                 int* blocksUsed) {
  uint64_t largest = 0;
  for (int k = 0; k < job.stepCount; ++k) largest = std::max(largest, job.steps[k].count);
  const size_t shares = (largest * typeSize(type) + kBytesPerBlock - 1) / kBytesPerBlock;
  const auto blocks = static_cast<unsigned>(std::clamp<size_t>(shares, 1, std::max(maxBlocks, 1)));
  *blocksUsed = static_cast<int>(blocks);
  void* args[] = {const_cast<ReduceJob*>(&job)};
  return static_cast<int>(cudaLaunchKernel(ReduceKernelTable::of(type, op, job.premul), dim3(blocks), dim3(kThreads),
                                           args, 0, static_cast<cudaStream_t>(stream)));
}

}  // namespace slimeccl
