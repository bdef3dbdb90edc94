// Matrices of the device-buffer overlap tests: bytes of bfloat16, float16, float or double, random
// in [-1, 1] or small integers (exact through any GEMM and sum of these sizes), and device memory
// with a guard byte.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <slimeccl.h>

#include <cstring>
#include <random>
#include <vector>

#include "device_values.h"

namespace slimeccl_test {

inline size_t sizeOf(slimecclDataType_t type) { return type == slimecclFloat64 ? 8 : type == slimecclFloat32 ? 4 : 2; }

// `v` as bytes of `type` at `at`.
inline void storeAs(slimecclDataType_t type, float v, char* at) {
  if (type == slimecclFloat64) {
    const double d = v;
    memcpy(at, &d, 8);
  } else if (type == slimecclFloat32) {
    memcpy(at, &v, 4);
  } else if (type == slimecclBfloat16) {
    const __nv_bfloat16 h = __float2bfloat16(v);
    memcpy(at, &h, 2);
  } else {
    const __half h = __float2half(v);
    memcpy(at, &h, 2);
  }
}

// Random values in [-1, 1] of `type`, as bytes.
inline std::vector<char> randomMatrix(slimecclDataType_t type, size_t elements, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<char> bytes(elements * sizeOf(type));
  for (size_t i = 0; i < elements; ++i) storeAs(type, value(engine), bytes.data() + i * sizeOf(type));
  return bytes;
}

// Integers in {-1, 0, 1} from `seed`.
inline std::vector<long> unitIntegers(size_t elements, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int> value(-1, 1);
  std::vector<long> m(elements);
  for (long& v : m) v = value(engine);
  return m;
}

// `values` as bytes of `type` (exact: every value is a small integer).
inline std::vector<char> asBytes(slimecclDataType_t type, const std::vector<long>& values) {
  std::vector<char> bytes(values.size() * sizeOf(type));
  for (size_t i = 0; i < values.size(); ++i)
    storeAs(type, static_cast<float>(values[i]), bytes.data() + i * sizeOf(type));
  return bytes;
}

struct MatrixBytes {
  char* data = nullptr;
  size_t bytes;
  explicit MatrixBytes(size_t n) : bytes(n) {
    CUDA_RANK_CHECK(cudaMalloc(reinterpret_cast<void**>(&data), n + 1));
    CUDA_RANK_CHECK(cudaMemset(data, 0xee, n + 1));
  }
  ~MatrixBytes() { cudaFree(data); }
  MatrixBytes(const MatrixBytes&) = delete;
  MatrixBytes& operator=(const MatrixBytes&) = delete;
  void write(const std::vector<char>& host, size_t at = 0) {
    CUDA_RANK_CHECK(cudaMemcpy(data + at, host.data(), host.size(), cudaMemcpyHostToDevice));
  }
  // Its bytes and the one guard byte past them.
  std::vector<char> read() const {
    std::vector<char> host(bytes + 1);
    CUDA_RANK_CHECK(cudaMemcpy(host.data(), data, bytes + 1, cudaMemcpyDeviceToHost));
    return host;
  }
};

}  // namespace slimeccl_test
