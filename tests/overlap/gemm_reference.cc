#include "gemm_reference.h"

#include <cblas.h>

#include <cstring>
#include <random>

namespace slimeccl_test {

std::vector<unsigned char> randomMatrix(slimecclDataType_t datatype, size_t rows, size_t columns, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  const size_t elements = rows * columns;
  std::vector<unsigned char> bytes(elements * (datatype == slimecclFloat64 ? 8 : 4));
  for (size_t i = 0; i < elements; ++i) {
    if (datatype == slimecclFloat64) {
      const double v = value(engine);
      memcpy(bytes.data() + i * 8, &v, 8);
    } else {
      const float v = static_cast<float>(value(engine));
      memcpy(bytes.data() + i * 4, &v, 4);
    }
  }
  return bytes;
}

std::vector<unsigned char> referenceC(slimecclDataType_t datatype, const GemmShape& shape,
                                      const std::vector<std::vector<unsigned char>>& aBlocks,
                                      const std::vector<unsigned char>& b) {
  const size_t elem = datatype == slimecclFloat64 ? 8 : 4;
  const size_t blockBytes = shape.mLocal * shape.n * elem;
  std::vector<unsigned char> c(blockBytes * aBlocks.size(), 0);
  if (shape.mLocal == 0 || shape.n == 0 || shape.k == 0) return c;
  const int m = static_cast<int>(shape.mLocal), n = static_cast<int>(shape.n), k = static_cast<int>(shape.k);
  for (size_t r = 0; r < aBlocks.size(); ++r) {
    void* out = c.data() + r * blockBytes;
    if (datatype == slimecclFloat64)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0,
                  reinterpret_cast<const double*>(aBlocks[r].data()), k, reinterpret_cast<const double*>(b.data()), n,
                  0.0, static_cast<double*>(out), n);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                  reinterpret_cast<const float*>(aBlocks[r].data()), k, reinterpret_cast<const float*>(b.data()), n,
                  0.0f, static_cast<float*>(out), n);
  }
  return c;
}

}  // namespace slimeccl_test
