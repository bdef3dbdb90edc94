// GPU reductions: one kernel runs an op's first handshake, then its steps, each of which reduces
// `count` elements of each source in order (peers' buffers through their mappings) into every
// destination, then the second handshake (src/device/kernel_handshake.cuh). Between two steps the
// grid meets, lets a peer know and may wait for one. The plan of which spans each rank reduces comes
// from algorithms/gpu_reduction.h. CUDA-free: the queuing code that includes it is also built
// without CUDA.
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
constexpr int kReduceMaxSteps = kReduceMaxRanks - 1;
// Enough for a ring's steps (two sources and a destination each) and for a step that reads and
// writes every rank.
constexpr int kReduceMaxSpans = 3 * kReduceMaxSteps;

// One step: its sources are spans[firstSpan ...], its destinations the spans after them.
struct ReduceStep {
  uint64_t count = 0;  // elements
  uint8_t firstSpan = 0, sources = 0, destinations = 0;
};

struct ReduceJob {
  SmCopyHandshake before, after;
  ReduceStep steps[kReduceMaxSteps];
  int stepCount = 0;
  // After step k but the last, stepSignals[k] (a peer's flag) is set; before step k but the first,
  // the grid waits for stepWaits[k] (this rank's flag) and clears it. 0: none.
  uint64_t stepSignals[kReduceMaxSteps];
  uint64_t stepWaits[kReduceMaxSteps];
  uint64_t spans[kReduceMaxSpans];  // device addresses
  // A source's rank, whose PreMulSum scalar multiplies it; -1: a partial result, taken as it is.
  int8_t spanRanks[kReduceMaxSpans];
  int divisor = 0;  // avg: the rank count, applied by the last step; 0: no division
  // PreMulSum: each input is multiplied by its rank's scalar before the sum; rank r's scalar lies at
  // scalarPointers[r] (device memory, read when the kernel runs) or, where that is 0, in the low
  // bytes of scalarBits[r].
  bool premul = false;
  int scalarCount = 0;
  uint64_t scalarPointers[kReduceMaxRanks];
  uint64_t scalarBits[kReduceMaxRanks];
  uint64_t counters = 0;  // as SmCopyJob's
};

// Loads the kernels of every type and op on the current GPU, as loadSmCopyKernel does and why.
void loadReduceKernels(int device);
bool reduceKernelsLoaded(int device);

// Queues the job (op: sum, prod, max or min; avg is sum with a divisor; a PreMulSum's job says so) as
// one kernel of at most `maxBlocks` blocks on `stream` (a cudaStream_t), sized by its largest step;
// the cudaError_t of the launch, *blocksUsed the blocks it launched with.
int launchReduce(const ReduceJob& job, slimecclDataType_t type, slimecclRedOp_t op, int maxBlocks, void* stream,
                 int* blocksUsed);

}  // namespace slimeccl
