// The GEMM half of AllGatherGemm: the C rows of rank r are A's block from rank r times B, one BLAS
// call per block, so the overlapped and the sequential paths make the same calls and produce the
// same bits.
#pragma once

#include <cstddef>

#include "include/slimeccl.h"

namespace slimeccl {

struct GemmRows {
  slimecclDataType_t type;
  size_t mLocal, n, k;
  const void* b;  // k x n, row-major
  void* c;        // (nranks * mLocal) x n, row-major
};

// Success, or InvalidArgument with a sentence when the sizes do not fit BLAS's int arguments or
// memory.
slimecclResult_t checkGemmRows(const GemmRows& rows, int rank, int nranks);

// An AllGatherOverlap callback: user is a GemmRows, aBlock the mLocal x k rows of rank srcRank.
void multiplyRowBlock(int srcRank, void* aBlock, size_t count, void* user);

}  // namespace slimeccl
