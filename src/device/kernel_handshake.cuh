// Device code that the GPU path's kernels share: the flag handshakes they run in place of the
// copy-engine form's stream memory operations, and the meeting of a kernel's blocks. CUDA only.
#pragma once

#include <cstdint>

#include "src/device/sm_copy.h"

namespace slimeccl {

__device__ inline void setFlags(const uint64_t* flags, int count) {
  for (int i = 0; i < count; ++i) *reinterpret_cast<volatile uint32_t*>(flags[i]) = 1;
}

__device__ inline void awaitFlags(const uint64_t* flags, int count) {
  for (int i = 0; i < count; ++i)
    while (*reinterpret_cast<volatile uint32_t*>(flags[i]) != 1) {}
}

__device__ inline void clearFlags(const uint64_t* flags, int count) {
  for (int i = 0; i < count; ++i) *reinterpret_cast<volatile uint32_t*>(flags[i]) = 0;
}

// Whether this block is the last of the grid to reach `counter`; the last one sets it back to 0.
// The block's threads meet before its first thread fences and counts, so what any of them wrote is
// seen system-wide before the count (a fence orders what its thread has observed, and the barrier
// made the others' writes observed): one fence per block, where one per thread cost each op about
// 2 ns per thread, in turn.
__device__ inline bool lastToArrive(uint32_t* counter) {
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

// Thread 0 of the block that `runs` the first handshake runs it, then raises a word in device memory
// (`counters` + 1) on which thread 0 of every other block waits.
__device__ inline void handshakeThenRaise(const SmCopyHandshake& before, uint64_t counters, bool runs) {
  volatile uint32_t* go = reinterpret_cast<uint32_t*>(counters) + 1;
  if (threadIdx.x == 0) {
    if (runs) {
      setFlags(before.set, before.sets);
      awaitFlags(before.wait, before.waits);
      clearFlags(before.wait, before.waits);
      __threadfence();
      *go = 1;
    } else {
      while (*go != 1) {}
      __threadfence();
    }
  }
  __syncthreads();
}

// Block 0 alone runs the first handshake: every block polling the flags in pinned host memory cost
// about 1 us per block, in turn.
__device__ inline void meetBefore(const SmCopyHandshake& before, uint64_t counters) {
  handshakeThenRaise(before, counters, blockIdx.x == 0);
}

// The first handshake once every block has done what comes before it (what each wrote is seen
// system-wide): the last block to arrive runs it.
__device__ inline void meetBeforeOnceAllArrive(const SmCopyHandshake& before, uint64_t counters) {
  handshakeThenRaise(before, counters, lastToArrive(reinterpret_cast<uint32_t*>(counters)));
}

// Between two steps of a kernel (`step` numbers the meeting from 1): once every block has finished
// the step before (what each wrote is seen system-wide), the last one to get here sets `signal` (a
// peer's flag, 0: none), waits for `wait` (this rank's flag, set by the peer whose result the next
// step reads; 0: none) and clears it, then raises the word on which the others wait.
__device__ inline void meetBetween(uint64_t signal, uint64_t wait, uint64_t counters, uint32_t step) {
  volatile uint32_t* go = reinterpret_cast<uint32_t*>(counters) + 1;
  const bool last = lastToArrive(reinterpret_cast<uint32_t*>(counters));
  if (threadIdx.x == 0) {
    if (last) {
      if (signal != 0) setFlags(&signal, 1);
      if (wait != 0) {
        awaitFlags(&wait, 1);
        clearFlags(&wait, 1);
      }
      __threadfence();
      *go = step + 1;
    } else {
      while (*go < step + 1) {}
      __threadfence();
    }
  }
  __syncthreads();
}

// After its work, the last block to finish lowers the word (every block is past it), sets the
// peers' second flags and waits for its own: the kernel ends when every peer is done with this
// rank's buffers.
__device__ inline void meetAfter(const SmCopyHandshake& after, uint64_t counters) {
  uint32_t* finished = reinterpret_cast<uint32_t*>(counters);
  if (lastToArrive(finished) && threadIdx.x == 0) {
    *(reinterpret_cast<volatile uint32_t*>(counters) + 1) = 0;
    setFlags(after.set, after.sets);
    awaitFlags(after.wait, after.waits);
    clearFlags(after.wait, after.waits);
  }
}

}  // namespace slimeccl
