// Inputs and the expected result of AllGatherGemm: random matrices (so that the order of the
// floating-point sums shows in the bits), and C computed with the same BLAS call per row block
// as the library makes, which the library's C must match bit for bit.
#pragma once

#include <slimeccl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace slimeccl_test {

struct GemmShape {
  size_t mLocal, n, k;
};

// Rank `rank`'s A block (mLocal x k) or B (k x n), as bytes of float or double.
std::vector<unsigned char> randomMatrix(slimecclDataType_t datatype, size_t rows, size_t columns, uint64_t seed);

// C = [A_0; A_1; ...] x B, one row block (one GEMM) per rank, row-major.
std::vector<unsigned char> referenceC(slimecclDataType_t datatype, const GemmShape& shape,
                                      const std::vector<std::vector<unsigned char>>& aBlocks,
                                      const std::vector<unsigned char>& b);

}  // namespace slimeccl_test
