// GPU reductions: one kernel runs an op's first handshake, reduces `count` elements of each source
// in order (peers' buffers through their mappings) into every destination, then runs the second
// handshake (src/device/kernel_handshake.cuh). The plan of which spans each rank reduces comes from
// algorithms/gpu_reduction.h. CUDA-free: the queuing code that includes it is also built without
// CUDA.
//
// Arithmetic is NCCL's and the host kernels' (algorithms/reduce.h): integers wrap, max and min let
// a NaN win, half and bfloat16 compute each step in float and round to the nearest even value of
// the type (float's precision makes that the correctly rounded result of the step), and avg
// divides the sum by the rank count at the end (integers truncating).
#pragma once

#include <cstdint>

#include "include/slimeccl.h"
#include "src/device/sm_copy.h"

namespace slimeccl {

constexpr int kReduceMaxRanks = 8;

struct ReduceJob {
  SmCopyHandshake before, after;
  uint64_t sources[kReduceMaxRanks];
  uint64_t destinations[kReduceMaxRanks];
  int sourceCount = 0, destinationCount = 0;
  uint64_t count = 0;  // elements
  int divisor = 0;     // avg: the rank count; 0: no division
  // PreMulSum: each source is multiplied by its rank's scalar before the sum; the scalar lies at
  // scalarPointers[s] (device memory, read when the kernel runs) or, where that is 0, in the low
  // bytes of scalarBits[s].
  bool premul = false;
  uint64_t scalarPointers[kReduceMaxRanks];
  uint64_t scalarBits[kReduceMaxRanks];
  uint64_t counters = 0;  // as SmCopyJob's
};

// Loads the kernels of every type and op on the current GPU, as loadSmCopyKernel does and why.
void loadReduceKernels(int device);
bool reduceKernelsLoaded(int device);

// Queues the job (op: sum, prod, max or min; avg is sum with a divisor; a PreMulSum's job says so) as
// one kernel of at most
// `maxBlocks` blocks on `stream` (a cudaStream_t); the cudaError_t of the launch, *blocksUsed the
// blocks it launched with.
int launchReduce(const ReduceJob& job, slimecclDataType_t type, slimecclRedOp_t op, int maxBlocks, void* stream,
                 int* blocksUsed);

}  // namespace slimeccl
