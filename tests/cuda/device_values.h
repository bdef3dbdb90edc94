// What the CUDA suites share: a check of a CUDA call inside a rank, and the int32 values each
// rank writes (distinct per rank, element and round).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rank_check.h"

#define CUDA_RANK_CHECK(call)                                                       \
  do {                                                                              \
    const cudaError_t cuda_rc_ = (call);                                            \
    RANK_CHECK(cuda_rc_ == cudaSuccess, #call, ": ", cudaGetErrorString(cuda_rc_)); \
  } while (0)

namespace slimeccl_test {

inline int32_t valueOf(int rank, size_t i, int round = 0) {
  return static_cast<int32_t>(rank * 7919 + static_cast<int64_t>(i) * 31 + round * 101);
}

inline std::vector<int32_t> valuesOf(int rank, size_t count, size_t first = 0, int round = 0) {
  std::vector<int32_t> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = valueOf(rank, first + i, round);
  return values;
}

}  // namespace slimeccl_test
