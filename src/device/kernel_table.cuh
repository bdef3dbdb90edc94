// The kernels of the GPU reductions come one per element type and operator. A kernel file names its
// row for an element type E as Row<E>::kernels (sum, prod, max, min, then PreMulSum); the table finds
// a kernel by slimecclDataType_t and operator, and loads them all on a GPU before any op is queued
// (loaded lazily at a first launch instead, a kernel could wait for the GPU to idle while a stream
// waits for host work: src/device/sm_copy.h). CUDA only.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "include/slimeccl.h"
#include "src/device/reduce_arith.cuh"

namespace slimeccl {

constexpr int kReductionKernelOps = 5;  // sum, prod, max, min, then PreMulSum; avg runs as sum

template <template <typename> class Row>
class KernelTable {
 public:
  static const void* of(slimecclDataType_t type, slimecclRedOp_t op, bool premul) {
    const int index = premul ? kReductionKernelOps - 1 : op == slimecclAvg ? slimecclSum : op;
    return rows_[type][index];
  }

  // Loads every kernel of the table on the current GPU (`device`), once; false where one cannot be.
  static bool load(int device) {
    if (device < 0 || device >= kMaxDevices) return false;
    if (loaded_[device].load()) return true;
    for (const void* const* row : rows_)
      for (int op = 0; op < kReductionKernelOps; ++op) {
        cudaFuncAttributes attributes;
        if (cudaFuncGetAttributes(&attributes, row[op]) != cudaSuccess) {
          cudaGetLastError();
          return false;
        }
      }
    loaded_[device].store(true);
    return true;
  }

  static bool loaded(int device) { return device >= 0 && device < kMaxDevices && loaded_[device].load(); }

  static constexpr int kMaxDevices = 64;  // a device index past it loads nothing

 private:
  // By slimecclDataType_t.
  static inline const void* const* const rows_[slimecclNumTypes] = {
      Row<int8_t>::kernels,  Row<uint8_t>::kernels,  Row<int32_t>::kernels, Row<uint32_t>::kernels,
      Row<int64_t>::kernels, Row<uint64_t>::kernels, Row<Half>::kernels,    Row<float>::kernels,
      Row<double>::kernels,  Row<Bfloat16>::kernels};
  static inline std::atomic<bool> loaded_[kMaxDevices];
};

}  // namespace slimeccl
